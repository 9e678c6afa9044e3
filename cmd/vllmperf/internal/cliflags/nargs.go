package cliflags

import (
	"regexp"
	"strings"
)

// nargsFlags are the flags vllm bench serve takes with several
// space-separated values (argparse's nargs="+"), each with what one of its
// values looks like: --goodput ttft:200 tpot:50 (KEY:VALUE words) and
// --lora-modules sql-lora chat-lora (any word that is not a flag).
var nargsFlags = map[string]*regexp.Regexp{
	"--goodput":      regexp.MustCompile(`^[a-z][a-z0-9_]*:[^\s:/]+$`),
	"--lora-modules": regexp.MustCompile(`^[^-]`),
}

// JoinNargs rewrites vLLM's space-separated form of a nargsFlags flag
// ("--goodput ttft:200 tpot:50") into the comma-separated form a
// string-slice flag reads ("--goodput ttft:200,tpot:50"): the words after
// the flag that look like its values join its value. A flag written
// "--flag=v", a flag with no value (pflag reports it) and everything after
// "--" are left as they are.
func JoinNargs(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		out = append(out, args[i])
		if args[i] == "--" {
			return append(out, args[i+1:]...)
		}
		value, ok := nargsFlags[args[i]]
		if !ok || i+1 >= len(args) {
			continue
		}
		values := []string{args[i+1]}
		i++
		for i+1 < len(args) && value.MatchString(args[i+1]) {
			values = append(values, args[i+1])
			i++
		}
		out = append(out, strings.Join(values, ","))
	}
	return out
}
