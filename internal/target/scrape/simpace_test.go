package scrape

import (
	"errors"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/vllmsim/simpace"
)

// TestSimPaceSeriesKept: the simulator's pace series, which carry no
// vllm: prefix, are kept under their own names (not ignored as "not a vLLM
// metric"), diffed like any counter, and named as exposed when missing.
func TestSimPaceSeriesKept(t *testing.T) {
	t.Parallel()
	exp := func(modelled, lost string) string {
		return `# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="m"} 1
# TYPE ` + simpace.MetricModelledSeconds + ` counter
` + simpace.MetricModelledSeconds + `{engine="0",model_name="m"} ` + modelled + `
# TYPE ` + simpace.MetricLostSeconds + ` counter
` + simpace.MetricLostSeconds + `{engine="0",model_name="m"} ` + lost + `
# TYPE ` + simpace.MetricBehindRatio + ` gauge
` + simpace.MetricBehindRatio + `{engine="0",model_name="m"} 0.25
# TYPE go_goroutines gauge
go_goroutines 7
`
	}
	before, err := Parse(strings.NewReader(exp("2", "0.5")), "before", t0)
	if err != nil {
		t.Fatal(err)
	}
	after, err := Parse(strings.NewReader(exp("12", "3")), "after", t0.Add(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, ig := range after.Ignored {
		if simpace.Owned(ig.Name) {
			t.Errorf("%s ignored: %s", ig.Name, ig.Reason)
		}
	}
	if len(after.Ignored) != 1 || after.Ignored[0].Name != "go_goroutines" {
		t.Errorf("Ignored = %v, want go_goroutines alone", after.Ignored)
	}
	if got, err := after.Gauge(simpace.MetricBehindRatio); err != nil || got != 0.25 {
		t.Errorf("%s = %v, %v; want 0.25", simpace.MetricBehindRatio, got, err)
	}
	d, err := Diff(before, after)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{simpace.MetricModelledSeconds: 10, simpace.MetricLostSeconds: 2.5} {
		if got, err := d.Counter(name); err != nil || got != want {
			t.Errorf("Δ%s = %v, %v; want %v", name, got, err, want)
		}
	}
	// Missing: named as exposed, without the vllm: prefix.
	plain, err := Parse(strings.NewReader("# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total 1\n"), "plain", t0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = plain.Counter(simpace.MetricLostSeconds)
	if !errors.Is(err, ErrNotAvailable) || !strings.Contains(err.Error(), "metric "+simpace.MetricLostSeconds+" is not available") ||
		!strings.Contains(err.Error(), "has no "+simpace.MetricLostSeconds+" series") {
		t.Errorf("missing series: %v", err)
	}
}
