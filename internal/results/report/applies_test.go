package report

import (
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// TestChecksThatDoNotApply: a GPU check of a server on no GPU (an
// Advisory NOT_AVAILABLE) is kept out of the counts and the list of
// checks that did not pass, and the summary says how many there were.
func TestChecksThatDoNotApply(t *testing.T) {
	t.Parallel()
	run := results.Run{Name: "profile=basic/scenario=startup", Checks: []verdict.Check{
		{Name: "ttft/count", Status: verdict.Pass},
		{Name: "kv/usage", Status: verdict.NotAvailable},
		{Name: "gpu/telemetry", Status: verdict.NotAvailable, Advisory: true},
	}}
	c := summariseChecks([]results.Run{run})
	if c.Total != 2 || c.NotApplicable != 1 || len(c.Failed) != 1 || c.Failed[0].Name != "kv/usage" {
		t.Errorf("summary %+v: want 2 counted, 1 not applicable, only kv/usage listed as not passed", c)
	}
	if got := c.String(); !strings.HasPrefix(got, "2 checks: 1 PASS, 1 NOT_AVAILABLE; 1 more do not apply here") {
		t.Errorf("String() = %q", got)
	}
	if got := checks(run.Checks); got != "kv/usage NOT_AVAILABLE" {
		t.Errorf("checks() = %q, want only the applicable check that did not pass", got)
	}
	if got := checks(run.Checks[:1:1]); got != "1/1 ok" {
		t.Errorf("checks() = %q, want 1/1 ok", got)
	}
	if got := checks([]verdict.Check{run.Checks[0], run.Checks[2]}); got != "1/1 ok" {
		t.Errorf("checks() with a check that does not apply = %q, want 1/1 ok", got)
	}
}
