package scrape

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

var inf = math.Inf(1)

// TestQuantileFollowsHistogramQuantile checks values worked out by hand with
// Prometheus's histogram_quantile rules.
func TestQuantileFollowsHistogramQuantile(t *testing.T) {
	t.Parallel()
	// 10 observations: 2 in (0,1], 4 in (1,2], 2 in (2,4], 2 above 4.
	h := &Histogram{Buckets: []Bucket{{1, 2}, {2, 6}, {4, 8}, {inf, 10}}, Count: 10, Sum: 25}
	for _, tc := range []struct {
		name string
		h    *Histogram
		q    float64
		want float64
	}{
		// rank 1 in the first bucket: interpolated from 0
		{"first bucket from zero", h, 0.1, 0.5},
		// rank 5: 3 of the 4 observations into (1,2]
		{"linear within a bucket", h, 0.5, 1.75},
		// rank 8 exactly at the top of (2,4]
		{"bucket top", h, 0.8, 4},
		// rank 9 lies in +Inf: the largest finite bound
		{"+Inf bucket rule", h, 0.9, 4},
		// q = 1 too
		{"max", h, 1, 4},
		// a first bucket at or below zero returns its bound
		{"non-positive first bound", &Histogram{Buckets: []Bucket{{-1, 3}, {0, 5}, {inf, 5}}}, 0.5, -1},
		// counts that go down are raised to the running maximum: {1:5, 2:5, Inf:10}
		{"non-monotonic", &Histogram{Buckets: []Bucket{{1, 5}, {2, 4}, {inf, 10}}}, 0.5, 1},
		// buckets out of order are sorted first
		{"unsorted", &Histogram{Buckets: []Bucket{{inf, 10}, {4, 8}, {1, 2}, {2, 6}}}, 0.5, 1.75},
	} {
		got, err := tc.h.Quantile(tc.q)
		if err != nil || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: Quantile(%v) = %v, %v; want %v", tc.name, tc.q, got, err, tc.want)
		}
	}
	if got, want := h.Overflow(), 2.0; got != want {
		t.Errorf("Overflow = %v, want %v", got, want)
	}
	if got, err := h.Mean(); err != nil || got != 2.5 {
		t.Errorf("Mean = %v, %v; want 25/10 = 2.5 exactly", got, err)
	}
}

func TestQuantileRefusesWhatItCannotEstimate(t *testing.T) {
	t.Parallel()
	ok := &Histogram{Buckets: []Bucket{{1, 2}, {inf, 2}}, Count: 2}
	for _, tc := range []struct {
		name string
		h    *Histogram
		q    float64
		want string
	}{
		{"q zero", ok, 0, "want 0 < q ≤ 1"},
		{"q above one", ok, 1.5, "want 0 < q ≤ 1"},
		{"q NaN", ok, math.NaN(), "want 0 < q ≤ 1"},
		{"no observations", &Histogram{Buckets: []Bucket{{1, 0}, {inf, 0}}}, 0.5, "no observations"},
		{"one bucket", &Histogram{Buckets: []Bucket{{inf, 3}}}, 0.5, "at least two buckets"},
		{"no +Inf", &Histogram{Buckets: []Bucket{{1, 1}, {2, 3}}}, 0.5, "+Inf bucket"},
		{"nil", nil, 0.5, "at least two buckets"},
	} {
		if _, err := tc.h.Quantile(tc.q); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error = %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := (&Histogram{}).Mean(); err == nil {
		t.Error("Mean of an empty histogram succeeded, want an error")
	}
}

func TestHistogramJSONSpellsBoundsLikeLE(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(&Histogram{Buckets: []Bucket{{0.005, 1}, {2560, 2}, {inf, 3}}, Count: 3, Sum: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"count":3,"sum":0.5,"buckets":[{"le":"0.005","count":1},{"le":"2560","count":2},{"le":"+Inf","count":3}]}`; got != want {
		t.Errorf("JSON = %s\nwant %s", got, want)
	}
}
