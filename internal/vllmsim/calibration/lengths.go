package calibration

import (
	"math"
	"math/rand/v2"
)

// OutputLengths gives n requests' output lengths for a replay. Fixed
// workloads give every request OutputTokens. Where outputs vary
// (OutputsVary), the sources publish only the mean (and the cap a request
// could not pass), so the lengths follow the distribution that assumes
// nothing more: the geometric distribution (a constant chance of stopping at
// every token, as EOS does) with that mean, truncated at OutputCap. The n
// lengths are the distribution's evenly spaced quantiles, adjusted so that
// their total is the published mean × n, in an order shuffled by seed: the
// replay is deterministic and its total is the published one.
func (w SimWorkload) OutputLengths(n int, seed uint64) []int {
	out := make([]int, n)
	if !w.OutputsVary || n == 0 {
		for i := range out {
			out[i] = w.OutputTokens
		}
		return out
	}
	p := stopChance(w.MeanOutputTokens, w.OutputCap)
	total := 0
	for i := range out {
		q := (float64(i) + 0.5) / float64(n)
		k := max(1, int(math.Ceil(math.Log1p(-q)/math.Log1p(-p))))
		if w.OutputCap > 0 {
			k = min(k, w.OutputCap)
		}
		out[i] = k
		total += k
	}
	// Nudge the longest uncapped lengths until the total is the published one.
	want := int(math.Round(w.MeanOutputTokens * float64(n)))
	for i := n - 1; total != want; i = (i - 1 + n) % n {
		switch {
		case total < want && (w.OutputCap == 0 || out[i] < w.OutputCap):
			out[i]++
			total++
		case total > want && out[i] > 1:
			out[i]--
			total--
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0xbb67ae8584caa73b))
	rng.Shuffle(n, func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// stopChance is the per-token chance p of stopping for which the mean of
// min(G, cap) is mean, G geometric on 1, 2, ... (cap 0: no cap): mean =
// (1 − (1−p)^cap) / p, or 1/p.
func stopChance(mean float64, cap int) float64 {
	m := func(p float64) float64 {
		if cap == 0 {
			return 1 / p
		}
		return -math.Expm1(float64(cap)*math.Log1p(-p)) / p
	}
	lo, hi := 1e-9, 1.0 // m falls as p grows
	for range 200 {
		mid := (lo + hi) / 2
		if m(mid) > mean {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
