package capacity

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// TestProgressLog checks capacity's line per run: its place among the
// runs at most, the completed rate against the one sent (a run far behind
// is flagged), and the time left, bounded by the budget.
func TestProgressLog(t *testing.T) {
	t.Parallel()
	clock := time.Unix(0, 0)
	now := func() time.Time { return clock }
	var out bytes.Buffer
	cfg := Config{Mode: Rate, Capacity: thresholds.Capacity{MaxRuns: 14, MaxTime: 10 * time.Minute}}
	log := progressLog(&out, cfg, now)
	clock = clock.Add(time.Minute)
	log(nil, Trial{Level: 4, Requests: 100, Good: 100, ReqPerSec: 3.9, Pass: true})
	clock = clock.Add(time.Minute)
	log(nil, Trial{Level: 19, Requests: 100, Good: 10, ReqPerSec: 3.5})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %q", out.String())
	}
	for i, want := range [][]string{
		{"run 1 of ≤14: 4 req/s: 100 requests", "completed 3.90 req/s of the 4 sent;", "1m so far, at most 9m left"},
		{"run 2 of ≤14: 19 req/s: ", "completed 3.50 req/s of the 19 sent (fell behind", "2m so far, at most 8m left"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d %q lacks %q", i+1, lines[i], w)
			}
		}
	}
}
