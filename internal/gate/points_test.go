package gate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate/gatetest"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// onePointChange makes every headline metric of one point worse by f (a
// lower-is-better one multiplied, tok/s divided).
func onePointChange(ch gatetest.Changes, profile string, conc int, f float64) gatetest.Changes {
	for _, u := range gatetest.ShapeUnits {
		if !units.Headline(u) {
			continue
		}
		k := f
		if u == units.TokPerSec {
			k = 1 / f
		}
		ch[fmt.Sprintf("%s/%d %s", profile, conc, u)] = k
	}
	return ch
}

// TestPointsTest: a point's contrast against its profile cancels a
// server start. Starts that shift whole profiles pass; one point 15% worse
// on a start of its own fails naming that point, its rows standing as
// REGRESSION; a point that a profile-wide 10% improvement left unchanged
// is no regression (its own change is none); with OwnStarts there is no
// points test.
func TestPointsTest(t *testing.T) {
	t.Parallel()
	starts := map[string]float64{"basic": 1.035, "chat": 0.98, "long": 1.025, "memory": 1.0, "spec": 1.03}
	better := gatetest.SlowProfiles(map[string]float64{"chat": 0.9})
	for _, tc := range []struct {
		name      string
		ch        gatetest.Changes
		opts      Options
		want      Outcome
		wantPoint string // the points test that regresses ("" none)
	}{
		{"starts shift whole profiles", gatetest.SlowProfiles(starts), Options{}, OutcomePass, ""},
		{"one point 15% worse, on starts", onePointChange(gatetest.SlowProfiles(starts), "chat", 8, 1.15), Options{}, OutcomeFail, "Perf/profile=chat/scenario=concurrency-sweep/conc=8"},
		{"one point 15% worse, no start", onePointChange(gatetest.Changes{}, "long", 2, 1.15), Options{}, OutcomeFail, "Perf/profile=long/scenario=concurrency-sweep/conc=2"},
		{"a profile 10% better but one point", onePointChange(better, "chat", 4, 1/0.9), Options{}, OutcomePass, ""},
		{"one point 15% worse, OwnStarts", onePointChange(gatetest.Changes{}, "long", 2, 1.15), Options{OwnStarts: true}, "", ""},
	} {
		base, next := gatetest.FiveProfiles.Pair(t, 91, tc.ch)
		rep, err := Compare(base, next, thresholds.Default(), tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if tc.opts.OwnStarts {
			if len(rep.Points) != 0 {
				t.Errorf("%s: %d points tests, want none", tc.name, len(rep.Points))
			}
			continue
		}
		if len(rep.Points) != len(gatetest.FiveProfiles.Profiles) {
			t.Errorf("%s: %d points tests, want one a profile", tc.name, len(rep.Points))
		}
		if got := rep.Outcome(); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, rep.Headline(), tc.want)
		}
		for _, p := range rep.Points {
			if p.Regression != (p.Point == tc.wantPoint) {
				t.Errorf("%s: %s", tc.name, p.Describe())
			}
		}
		if tc.wantPoint == "" {
			continue
		}
		if !strings.Contains(rep.Headline(), tc.wantPoint) {
			t.Errorf("%s: the verdict line does not name %s: %s", tc.name, tc.wantPoint, rep.Headline())
		}
		for _, row := range rep.Rows {
			if row.Verdict == NoRegression && row.Name == tc.wantPoint && strings.Contains(row.Reason, "its profile's one-sided test") {
				t.Errorf("%s: %s %s demoted although its point regressed: %s", tc.name, row.Name, row.Unit, row.Reason)
			}
		}
	}
}
