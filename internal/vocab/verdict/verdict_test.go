package verdict

import (
	"testing"

	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

func TestCheckFailed(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name        string
		c           Check
		lax, strict bool
	}{
		{"a pass never fails", Check{Status: Pass}, false, false},
		{"a failure always fails", Check{Status: Fail}, true, true},
		{"an invalid measurement always fails", Check{Status: Invalid}, true, true},
		{"an undecided check always fails", Check{Status: Inconclusive}, true, true},
		{"a missing metric fails in strict mode only", Check{Status: NotAvailable}, false, true},
		{"an advisory missing metric fails no run", Check{Status: NotAvailable, Advisory: true}, false, false},
	} {
		if got := tt.c.Failed(false); got != tt.lax {
			t.Errorf("%s: Failed(false) = %v", tt.name, got)
		}
		if got := tt.c.Failed(true); got != tt.strict {
			t.Errorf("%s: Failed(true) = %v", tt.name, got)
		}
	}
	if got, want := (Check{Name: "kv_peak", Status: Fail, Detail: "99% > 95%"}).String(), "FAIL kv_peak: 99% > 95%"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestCheckLine(t *testing.T) {
	t.Parallel()
	got := Check{Name: "gpu/throttle", Status: Invalid, Detail: "SW power cap\nfor 3 of 5 samples"}.Line()
	if want := "check: INVALID gpu/throttle: SW power cap for 3 of 5 samples"; got != want {
		t.Errorf("Line() = %q, want %q (one line, so the gate reads it back)", got, want)
	}
}

func TestOutcomeExitCode(t *testing.T) {
	t.Parallel()
	for o, want := range map[Outcome]int{OutcomePass: 0, OutcomeFail: 1, OutcomeInvalid: 2, OutcomeInconclusive: 3} {
		if got := o.ExitCode(); got != want {
			t.Errorf("%s.ExitCode() = %d, want %d", o, got, want)
		}
	}
}

func TestApplies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c    Check
		want bool
	}{
		{Check{Status: Pass}, true},
		{Check{Status: NotAvailable}, true},
		{Check{Status: NotAvailable, Advisory: true}, false},
		{Check{Status: Invalid}, true},
	} {
		if got := tc.c.Applies(); got != tc.want {
			t.Errorf("%+v.Applies() = %v, want %v", tc.c, got, tc.want)
		}
	}
}

// TestInconclusiveOneWord: the exit policy's inconclusive error (package
// exitstatus, which cannot import this one) starts with this package's
// word for it.
func TestInconclusiveOneWord(t *testing.T) {
	t.Parallel()
	const want = string(Inconclusive) + ": why"
	if got := exitstatus.Inconclusive("why").Error(); got != want {
		t.Errorf("exitstatus.Inconclusive(%q).Error() = %q, want %q", "why", got, want)
	}
}
