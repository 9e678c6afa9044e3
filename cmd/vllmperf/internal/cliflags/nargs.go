package cliflags

import (
	"regexp"
	"slices"
	"strings"
)

// NargsFlags are the flags vLLM bench serve takes with several
// space-separated values (argparse's nargs="+"): --goodput ttft:200 tpot:50.
var NargsFlags = []string{"--goodput"}

// nargsValue is what one of those values looks like: KEY:VALUE.
var nargsValue = regexp.MustCompile(`^[a-z][a-z0-9_]*:[^\s:/]+$`)

// JoinNargs rewrites "--goodput ttft:200 tpot:50", vLLM's space-separated
// form, into "--goodput ttft:200,tpot:50", the comma-separated form a
// string-slice flag reads: the words after one of NargsFlags that look
// like KEY:VALUE join its value. Nothing after "--" is touched.
func JoinNargs(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		out = append(out, args[i])
		if args[i] == "--" {
			return append(out, args[i+1:]...)
		}
		if !slices.Contains(NargsFlags, args[i]) || i+1 >= len(args) {
			continue
		}
		values := []string{args[i+1]}
		i++
		for i+1 < len(args) && nargsValue.MatchString(args[i+1]) {
			values = append(values, args[i+1])
			i++
		}
		out = append(out, strings.Join(values, ","))
	}
	return out
}
