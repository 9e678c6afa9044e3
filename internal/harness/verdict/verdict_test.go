package verdict

import "testing"

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
