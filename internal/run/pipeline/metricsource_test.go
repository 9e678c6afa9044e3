package pipeline

import (
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/target/scrape"
)

// TestModelWarnings: a run is warned when the server labels its series
// by model_name but none with the measured model's, and only then.
func TestModelWarnings(t *testing.T) {
	const page = "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\",model_name=\"a\"} 1\nvllm:num_requests_running{engine=\"0\",model_name=\"b\"} 2\n"
	unlabelled := "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 1\n"
	parse := func(text string) *scrape.Snapshot {
		s, err := scrape.Parse(strings.NewReader(text), "test", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	filtered := parse(page)
	filtered.Model = "a" // as WithModel("a") leaves it
	tests := []struct {
		name  string
		snap  *scrape.Snapshot
		label string
		want  string // "" no warning
	}{
		{"filtered", filtered, "a", ""},
		{"no label asked", parse(page), "", ""},
		{"unlabelled server", parse(unlabelled), "a", ""},
		{"no scrape", nil, "a", ""},
		{"none matches", parse(page), "c", `no series is labelled model_name="c" (the model measured), so the series of a, b were summed`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := modelWarnings(tc.snap, tc.label)
			if tc.want == "" {
				if len(got) != 0 {
					t.Errorf("warnings %v, want none", got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0].Error(), tc.want) {
				t.Errorf("warnings %v, want one containing %q", got, tc.want)
			}
		})
	}
}
