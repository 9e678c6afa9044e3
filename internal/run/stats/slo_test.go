package stats

import (
	"strings"
	"testing"
	"time"
)

func TestParseSLO(t *testing.T) {
	t.Parallel()
	got, err := ParseSLO([]string{"ttft:200 tpot:50", "E2EL:1500.5"})
	want := SLO{TTFT: 200 * time.Millisecond, TPOT: 50 * time.Millisecond, E2EL: 1500500 * time.Microsecond}
	if err != nil || got != want {
		t.Errorf("ParseSLO = %+v, %v; want %+v", got, err, want)
	}
	for item, msg := range map[string]string{"ttfb:100": "unknown metric", "ttft": "NAME:MILLISECONDS", "ttft:-1": "NAME:MILLISECONDS"} {
		if _, err := ParseSLO([]string{item}); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseSLO(%q) = %v, want %q", item, err, msg)
		}
	}
}
