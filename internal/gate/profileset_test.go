package gate

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate/input"
)

// TestProfileSet: a profile the baseline lacks is compared to nothing and
// said so; one the new results lack is refused, naming it, unless forced.
func TestProfileSet(t *testing.T) {
	t.Parallel()
	bench := func(profile string) string {
		return runs("profile="+profile+"/scenario=a-2", 6, steady("tok/s", 100))
	}
	for _, tc := range []struct {
		name      string
		base, new []string // profiles on each side
		force     bool
		onlyNew   []string // the report's OnlyNew; nil with refused
		warning   string   // a warning the report carries
		refused   string   // the MismatchError's words
	}{
		// Same set: nothing to say.
		{name: "same", base: []string{"basic", "low-latency"}, new: []string{"basic", "low-latency"}},
		// A new profile before `make baseline`: compared to nothing.
		{name: "added", base: []string{"basic"}, new: []string{"basic", "wide"},
			onlyNew: []string{"Perf/profile=wide/scenario=a"},
			warning: "new profile(s) wide: not in the baseline, their benchmarks are not compared (listed as in the new results only); `make baseline` adds them"},
		// A profile the new results lack: refused, named.
		{name: "removed", base: []string{"basic", "low-latency"}, new: []string{"basic"},
			refused: `the profiles differ: "basic", "low-latency" in base.txt, "basic" in new.txt: the new results lack the baseline's profile(s) low-latency: run them (VLLMPERF_PROFILES), or re-baseline if they were removed on purpose`},
		// ... compared anyway when forced.
		{name: "removed forced", base: []string{"basic", "low-latency"}, new: []string{"basic"}, force: true,
			warning: "--force: the profiles differ"},
		// One removed and one added: refused for the removed one only.
		{name: "renamed", base: []string{"basic", "low-latency"}, new: []string{"basic", "lower-latency"},
			refused: "lack the baseline's profile(s) low-latency: run them"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base, next := header, header
			for _, p := range tc.base {
				base += bench(p)
			}
			for _, p := range tc.new {
				next += bench(p)
			}
			rep, err := Compare(parse(t, "base.txt", base), parse(t, "new.txt", next), nil, Options{Force: tc.force, ForceFlag: "--force"})
			if tc.refused != "" {
				var me *input.MismatchError
				if !errors.As(err, &me) || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("error %v, want a MismatchError containing %q", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(rep.OnlyNew, tc.onlyNew) {
				t.Errorf("OnlyNew = %q, want %q", rep.OnlyNew, tc.onlyNew)
			}
			found := tc.warning == ""
			for _, w := range rep.Warnings {
				found = found || strings.Contains(w, tc.warning)
			}
			if !found {
				t.Errorf("warnings %q lack %q", rep.Warnings, tc.warning)
			}
		})
	}
}
