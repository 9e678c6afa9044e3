package testphase

import (
	"strings"
	"testing"
)

func TestCurrent(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want Phase
		err  string
	}{
		{"", "", ""},
		{"race", PhaseRace, ""},
		{" alone ", PhaseAlone, ""},
		{"timed", PhaseTimed, ""},
		{"measured", PhaseMeasured, ""},
		{"fault", "", `VLLMPERF_TEST_PHASE="fault" is not a phase of make test: want one of race, timed, alone, measured`},
		{"TIMED", "", "is not a phase of make test"},
	} {
		t.Setenv(EnvPhase, tc.env)
		got, err := Current()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want one containing %q", tc.env, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.env, got, err, tc.want)
		}
	}
}

func TestSkipReason(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		running, declared Phase
		want              string
	}{
		{"", PhaseAlone, ""},
		{PhaseAlone, PhaseAlone, ""},
		{PhaseTimed, PhaseTimed, ""},
		{PhaseRace, PhaseAlone, "alone test: runs in make test's alone phase, not this race phase (VLLMPERF_TEST_PHASE=alone)"},
		{PhaseAlone, PhaseMeasured, "measured test: runs in make test's measured phase, not this alone phase (VLLMPERF_TEST_PHASE=measured)"},
	} {
		if got := SkipReason(tc.running, tc.declared); got != tc.want {
			t.Errorf("SkipReason(%q, %q) = %q, want %q", tc.running, tc.declared, got, tc.want)
		}
	}
}

// TestDeclarationsSkip runs declared subtests under each phase and checks
// which ran, which skipped, and that Fault never skips.
func TestDeclarationsSkip(t *testing.T) {
	declare := map[string]func(testing.TB){"measured": Measured, "timed": Timed, "alone": Alone, "fault": Fault}
	for _, tc := range []struct {
		env string
		ran []string
	}{
		{"", []string{"alone", "fault", "measured", "timed"}},
		{"race", []string{"fault"}},
		{"alone", []string{"alone", "fault"}},
		{"timed", []string{"fault", "timed"}},
		{"measured", []string{"fault", "measured"}},
	} {
		t.Setenv(EnvPhase, tc.env)
		var ran []string
		for _, name := range []string{"alone", "fault", "measured", "timed"} {
			t.Run(tc.env+"/"+name, func(t *testing.T) {
				declare[name](t)
				ran = append(ran, name)
			})
		}
		if strings.Join(ran, " ") != strings.Join(tc.ran, " ") {
			t.Errorf("%s=%q: ran %v, want %v", EnvPhase, tc.env, ran, tc.ran)
		}
	}
}
