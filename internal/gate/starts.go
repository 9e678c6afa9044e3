package gate

import "fmt"

// startShare is the factor of start_spread² in the variance of the
// shift between a side measured on base starts and one on next starts
// (each side's mean over its starts): 1/base + 1/next, 2 with one start
// a side. Fewer than one start counts as one.
func startShare(base, next int) float64 {
	return 1/float64(max(1, base)) + 1/float64(max(1, next))
}

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
