package scrape

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Histogram is a Prometheus histogram: cumulative bucket counts, sum and
// count of the observations.
type Histogram struct {
	Count float64 `json:"count"`
	Sum   float64 `json:"sum"`
	// Buckets are sorted by UpperBound; the last one is +Inf and holds
	// every observation.
	Buckets []Bucket `json:"buckets"`
}

// Bucket is one histogram bucket: how many observations were ≤ UpperBound.
type Bucket struct {
	UpperBound float64
	Count      float64 // cumulative
}

// MarshalJSON writes {"le": "0.5", "count": 3}, with le spelled as the
// exposition's le label ("+Inf" for the last bucket).
func (b Bucket) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		LE    string  `json:"le"`
		Count float64 `json:"count"`
	}{FormatBound(b.UpperBound), b.Count})
}

// FormatBound spells a bucket bound the way the le label does: "0.005",
// "2560", "+Inf".
func FormatBound(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// Mean returns Sum/Count, exact (no bucket interpolation). It fails when the
// histogram holds no observation.
func (h *Histogram) Mean() (float64, error) {
	if h == nil || h.Count <= 0 {
		return 0, fmt.Errorf("no observations: the mean is undefined")
	}
	return h.Sum / h.Count, nil
}

// Overflow returns how many observations lie above the largest finite bucket
// bound. Quantiles that fall among them are reported as that bound (see
// Quantile), which then understates them.
func (h *Histogram) Overflow() float64 {
	n := len(h.Buckets)
	if n < 2 {
		return 0
	}
	return h.Buckets[n-1].Count - h.Buckets[n-2].Count
}

// Quantile estimates the q-quantile (0 < q ≤ 1) of the observations the way
// Prometheus's histogram_quantile does:
//
//   - the rank is q × (count of the +Inf bucket); the quantile lies in the
//     first bucket whose cumulative count reaches the rank;
//   - within that bucket it is interpolated linearly between the bucket's
//     lower bound (the previous bucket's upper bound, or 0 for the first
//     bucket when its upper bound is positive) and its upper bound;
//   - the +Inf-bucket rule: when the rank falls in the +Inf bucket, the
//     result is the largest finite upper bound (an underestimate; Overflow
//     says how many observations lie beyond it);
//   - a first bucket with an upper bound ≤ 0 returns that bound;
//   - cumulative counts that decrease (float noise, or a torn scrape) are
//     raised to the running maximum first, as Prometheus does.
//
// It fails when q is out of range, when there is no observation, or when the
// histogram has fewer than two buckets or lacks the +Inf bucket.
func (h *Histogram) Quantile(q float64) (float64, error) {
	if math.IsNaN(q) || q <= 0 || q > 1 {
		return 0, fmt.Errorf("quantile %v: want 0 < q ≤ 1", q)
	}
	if h == nil || len(h.Buckets) < 2 {
		return 0, fmt.Errorf("quantile needs at least two buckets")
	}
	b := slices.Clone(h.Buckets)
	slices.SortFunc(b, func(x, y Bucket) int { return cmpFloat(x.UpperBound, y.UpperBound) })
	if !math.IsInf(b[len(b)-1].UpperBound, 1) {
		return 0, fmt.Errorf("quantile needs the +Inf bucket")
	}
	for i := 1; i < len(b); i++ {
		b[i].Count = max(b[i].Count, b[i-1].Count)
	}
	total := b[len(b)-1].Count
	if total <= 0 {
		return 0, fmt.Errorf("no observations: quantile %v is undefined", q)
	}
	rank := q * total
	i, _ := slices.BinarySearchFunc(b[:len(b)-1], rank, func(x Bucket, r float64) int {
		if x.Count >= r {
			return 1
		}
		return -1
	})
	if i == len(b)-1 {
		return b[len(b)-2].UpperBound, nil
	}
	if i == 0 && b[0].UpperBound <= 0 {
		return b[0].UpperBound, nil
	}
	lower, count := 0.0, b[i].Count
	if i > 0 {
		lower = b[i-1].UpperBound
		count -= b[i-1].Count
		rank -= b[i-1].Count
	}
	return lower + (b[i].UpperBound-lower)*(rank/count), nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sameBounds reports whether two histograms have identical bucket bounds.
func sameBounds(a, b *Histogram) bool {
	return slices.EqualFunc(a.Buckets, b.Buckets, func(x, y Bucket) bool { return x.UpperBound == y.UpperBound })
}

// add adds o into h bucket-wise; the bounds must be the same.
func (h *Histogram) add(o *Histogram) {
	for i := range h.Buckets {
		h.Buckets[i].Count += o.Buckets[i].Count
	}
	h.Count += o.Count
	h.Sum += o.Sum
}

func (h *Histogram) clone() *Histogram {
	c := *h
	c.Buckets = slices.Clone(h.Buckets)
	return &c
}
