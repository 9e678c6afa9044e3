package perfgate

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// TestOptionsFromEnv: make perf-gate's settings are read through package
// envvar: the defaults when unset, the values when set, and a bad value is
// an error naming the variable and what to write, never a silent default.
func TestOptionsFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want func(Options) bool
		err  string
	}{
		// Nothing set: count 10, no budget, nothing allowed or refreshed.
		{"defaults", nil, func(o Options) bool { return o.Count == 10 && o.Budget == 0 && !o.Refresh && !o.AllowInconclusive }, ""},
		// Each set.
		{"set", map[string]string{envvar.Count.Name: "4", envvar.Budget.Name: "2h", envvar.BaselineRefresh.Name: "true", envvar.AllowInconclusive.Name: "1", envvar.GateResults.Name: "out", envvar.GateBase.Name: "origin/main", envvar.GateLabels.Name: "perf-gate,x"},
			func(o Options) bool {
				return o.Count == 4 && o.Budget == 2*time.Hour && o.Refresh && o.AllowInconclusive && o.Results == "out" &&
					o.Change.Base == "origin/main" && len(o.Change.Labels) == 2
			}, ""},
		// A count below 1.
		{"count 0", map[string]string{envvar.Count.Name: "0"}, nil, `VLLMPERF_COUNT="0": want a whole number of at least 1`},
		// The old names are still read (package envvar warns).
		{"old names", map[string]string{envvar.Count.Old: "3", envvar.GateResults.Old: "old-out", envvar.AllowInconclusive.Old: "true", envvar.GateBase.Old: "origin/dev"},
			func(o Options) bool {
				return o.Count == 3 && o.Results == "old-out" && o.AllowInconclusive && o.Change.Base == "origin/dev"
			}, ""},
		// The new name wins over the old one.
		{"both names", map[string]string{envvar.Count.Name: "4", envvar.Count.Old: "3"}, func(o Options) bool { return o.Count == 4 }, ""},
		// A bad value under the old name names the old name.
		{"old count 0", map[string]string{envvar.Count.Old: "0"}, nil, `COUNT="0": want a whole number of at least 1`},
		// A budget with no unit.
		{"budget", map[string]string{envvar.Budget.Name: "3"}, nil, `VLLMPERF_BUDGET="3": want a Go duration such as 2h or 45m`},
		// A switch misspelt: no longer a silent false.
		{"allow typo", map[string]string{envvar.AllowInconclusive.Name: "yes"}, nil, `VLLMPERF_ALLOW_INCONCLUSIVE="yes": want true or false`},
		{"refresh typo", map[string]string{envvar.BaselineRefresh.Name: "ture"}, nil, `VLLMPERF_BASELINE_REFRESH="ture": want true or false`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, s := range []envvar.Setting{envvar.Gate, envvar.Count, envvar.Budget, envvar.GateResults, envvar.BaselineRefresh, envvar.AllowInconclusive, envvar.GateBase, envvar.GateLabels, envvar.Sequential} {
				t.Setenv(s.Name, tc.env[s.Name])
				if s.Old != "" {
					t.Setenv(s.Old, tc.env[s.Old])
				}
			}
			t.Setenv(envvar.BaselineStore.Name, t.TempDir())
			o, err := OptionsFromEnv(io.Discard, io.Discard)
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("err = %v, want one with %q", err, tc.err)
			case tc.err == "" && (err != nil || !tc.want(o)):
				t.Errorf("options %+v, %v", o, err)
			}
		})
	}
}
