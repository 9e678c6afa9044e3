package cliflags

import "strings"

// MultiValueFlags are the flags that take several space-separated values,
// as vllm bench serve's nargs="+" flags do (--lora-modules a b c): pflag
// takes one value a flag, so JoinMultiValues rewrites them first.
var MultiValueFlags = []string{"--lora-modules"}

// JoinMultiValues rewrites "--flag v1 v2 ..." of a MultiValueFlags flag
// into "--flag=v1,v2,..." (a string slice flag's form): the values are the
// words after the flag up to the next one that starts with "-". Other
// arguments, and a flag already written "--flag=v", are left as they are.
func JoinMultiValues(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if !isMultiValue(a) {
			out = append(out, a)
			continue
		}
		var vals []string
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
			vals = append(vals, args[i])
		}
		if len(vals) == 0 {
			out = append(out, a) // pflag reports the missing value
			continue
		}
		out = append(out, a+"="+strings.Join(vals, ","))
	}
	return out
}

func isMultiValue(a string) bool {
	for _, f := range MultiValueFlags {
		if a == f {
			return true
		}
	}
	return false
}
