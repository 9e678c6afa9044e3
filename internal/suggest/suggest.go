// Package suggest finds the "did you mean" candidate for a mistyped name
// (a vLLM flag in a profile or on the simulator's command line).
package suggest

import "sort"

// Closest returns the candidate nearest to name by edit distance, or "" when
// none is close enough to be a plausible typo: the distance must be below
// len(name)/3+2. When none is that close, a candidate that name is a prefix
// of counts ("max-num-seq" of "max-num-seqs"), provided name has at least 5
// characters. Ties resolve to the alphabetically first candidate.
func Closest(name string, candidates []string) string {
	sorted := append([]string(nil), candidates...)
	sort.Strings(sorted)
	best, bestDist := "", len(name)/3+2
	for _, k := range sorted {
		if d := EditDistance(name, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	if best == "" && len(name) >= 5 {
		for _, k := range sorted {
			if len(k) > len(name) && k[:len(name)] == name {
				return k
			}
		}
	}
	return best
}

// EditDistance is the Levenshtein distance between a and b.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
