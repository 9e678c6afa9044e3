package gate

import "fmt"

// startsPhrase says how many server starts the sides were measured on,
// each a what ("start" or "server start"): "one start a side", "3 starts
// a side", "1 start in the baseline and 2 in the new results".
func startsPhrase(base, next int, what string) string {
	base, next = max(1, base), max(1, next)
	switch {
	case base == 1 && next == 1:
		return "one " + what + " a side"
	case base == next:
		return fmt.Sprintf("%d %ss a side", base, what)
	}
	noun := what + "s"
	if base == 1 {
		noun = what
	}
	return fmt.Sprintf("%d %s in the baseline and %d in the new results", base, noun, next)
}
