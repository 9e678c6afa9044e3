package bisect

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/orchestrate/upgrade"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
)

// fakeGate decides by NEW's simulator flags, as the builds are written in
// the tests' candidate lists: --sim-slowdown is worse (DIFFERENT),
// --sim-startup never starts, --sim-jitter stays UNKNOWN; anything else is
// SAME. It records the builds it compared.
type fakeGate struct{ compared []string }

func (f *fakeGate) compare(_ context.Context, cfg upgrade.Config) (outcome, error) {
	args := strings.Join(cfg.New.SimArgs, " ")
	f.compared = append(f.compared, args)
	switch {
	case strings.Contains(strings.Join(cfg.Old.SimArgs, " "), "--sim-startup"):
		return outcome{}, &upgrade.StartError{Side: "OLD", Profile: "basic", Err: errors.New("server did not become healthy")}
	case strings.Contains(args, "--sim-startup"):
		return outcome{}, &upgrade.StartError{Side: "NEW", Profile: "basic", Err: errors.New("server did not become healthy")}
	case strings.Contains(args, "--sim-jitter"):
		return outcome{decision: gate.Unknown, headline: "UNKNOWN after 20 pairs"}, nil
	case strings.Contains(args, "--sim-slowdown"):
		return outcome{decision: gate.Different, headline: "DIFFERENT after 6 pairs"}, nil
	}
	return outcome{decision: gate.Same, headline: "SAME after 6 pairs"}, nil
}

// builds makes a candidate list: one letter a build, g good (SAME), b bad
// (DIFFERENT), s a build that does not start, u one that stays UNKNOWN.
func builds(t *testing.T, spec string) []Candidate {
	t.Helper()
	var lines []string
	for i, r := range spec {
		args := map[rune]string{'g': "", 'b': " --sim-slowdown 1.25", 's': " --sim-startup 1h", 'u': " --sim-jitter 0.5"}[r]
		lines = append(lines, fmt.Sprintf("sim --sim-seed %d%s", i, args))
	}
	c, err := ParseCandidates("test", []byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSearch: the first bad build is found in at most MaxComparisons
// comparisons without skips; skipped builds are stepped around, and a
// range is named when they hide the first bad one.
func TestSearch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec     string
		firstBad int // -1: none
		reason   string
		maxSteps int
	}{
		{spec: "ggggbbbb", firstBad: 4, maxSteps: 4},
		{spec: "gb", firstBad: 1, maxSteps: 1},
		{spec: "gggggggb", firstBad: 7, maxSteps: 4},
		{spec: "gbbbbbbb", firstBad: 1, maxSteps: 4},
		{spec: "ggbbbbbbbbbbbbbbb", firstBad: 2, maxSteps: 5},
		{spec: "gggggggg", firstBad: -1, reason: "is not worse than the known-good", maxSteps: 4},
		{spec: "gggsbbbb", firstBad: -1, reason: "the first bad build is one of lines 4 to 5", maxSteps: 5},
		{spec: "ggsggbbb", firstBad: 5, maxSteps: 5},
		{spec: "gggusbbb", firstBad: -1, reason: "the first bad build is one of lines 4 to 6", maxSteps: 5},
		{spec: "ggggggbs", firstBad: 6, maxSteps: 4},
		{spec: "gggggggs", firstBad: -1, reason: "could not be confirmed bad", maxSteps: 5},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			t.Parallel()
			f := &fakeGate{}
			res, err := Run(context.Background(), Config{Candidates: builds(t, tc.spec), Dir: t.TempDir(), compare: f.compare})
			if err != nil {
				t.Fatal(err)
			}
			if res.FirstBad != tc.firstBad {
				t.Errorf("first bad %d, want %d: %s", res.FirstBad, tc.firstBad, res.Headline())
			}
			if !strings.Contains(res.Reason, tc.reason) {
				t.Errorf("reason %q lacks %q", res.Reason, tc.reason)
			}
			if len(res.Steps) > tc.maxSteps {
				t.Errorf("%d comparisons, want at most %d: %v", len(res.Steps), tc.maxSteps, f.compared)
			}
			if !strings.ContainsRune(tc.spec, 's') && !strings.ContainsRune(tc.spec, 'u') && len(res.Steps) > MaxComparisons(len(tc.spec)) {
				t.Errorf("%d comparisons, above MaxComparisons %d", len(res.Steps), MaxComparisons(len(tc.spec)))
			}
			seen := map[string]bool{}
			for _, c := range f.compared {
				if seen[c] {
					t.Errorf("build %q compared twice", c)
				}
				seen[c] = true
			}
			if _, err := os.Stat(filepath.Join(res.Steps[0].Dir)); err == nil {
				t.Errorf("step dir %q is not relative to the results folder", res.Steps[0].Dir)
			}
		})
	}
}

// TestKnownGoodDoesNotStart: a known-good build that does not start stops
// the bisection with an error that says so, instead of skipping every
// build.
func TestKnownGoodDoesNotStart(t *testing.T) {
	t.Parallel()
	f := &fakeGate{}
	_, err := Run(context.Background(), Config{Candidates: builds(t, "sgggbbbb"), Dir: t.TempDir(), compare: f.compare})
	if err == nil || !strings.Contains(err.Error(), "the known-good build line 1 (sim --sim-seed 0 --sim-startup 1h) did not start") {
		t.Errorf("err %v, want one naming the known-good build that did not start", err)
	}
	if len(f.compared) != 1 {
		t.Errorf("%d comparisons after the known-good build failed to start, want 1", len(f.compared))
	}
}

// TestReuse: a bisection started again on the same folder compares the
// runs an earlier one measured again instead of measuring them again, and
// its prediction times the comparisons from them.
func TestReuse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cands := builds(t, "ggggbbbb")
	f := &fakeGate{}
	first, err := Run(context.Background(), Config{Candidates: cands, Dir: dir, compare: f.compare})
	if err != nil {
		t.Fatal(err)
	}
	// The fake leaves no bench files: write the ones each step would
	// have, a clear regression where the step was bad.
	for _, st := range first.Steps {
		slow := 1.0
		if st.Verdict == Bad {
			slow = 1.5
		}
		writeBench(t, filepath.Join(dir, st.Dir, upgrade.OldFile), 1)
		writeBench(t, filepath.Join(dir, st.Dir, upgrade.NewFile), slow)
	}
	g := &fakeGate{}
	again, err := Run(context.Background(), Config{Candidates: cands, Dir: dir, compare: g.compare})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.compared) != 0 || again.FirstBad != 4 {
		t.Errorf("second bisection measured %v and found %d, want nothing measured and 4", g.compared, again.FirstBad)
	}
	for _, st := range again.Steps {
		if !st.Reused {
			t.Errorf("step %d not reused", st.N)
		}
	}
	if again.Prediction.StepTime <= 0 || !strings.Contains(again.Prediction.String(), "measured earlier") {
		t.Errorf("prediction %q does not time the comparisons from the earlier steps", again.Prediction)
	}
	// Other builds in the same folder never take those runs.
	other := builds(t, "gggbbbbb")
	h := &fakeGate{}
	if _, err := Run(context.Background(), Config{Candidates: other, Dir: dir, compare: h.compare}); err != nil {
		t.Fatal(err)
	}
	if len(h.compared) == 0 {
		t.Error("other builds reused the runs of the first list")
	}
}

// writeBench writes 8 runs of one point, TPOT about 10 ms × slow.
func writeBench(t *testing.T, path string, slow float64) {
	t.Helper()
	var b strings.Builder
	b.WriteString("gpu: sim\nmodel: m\nbackend: sim\n")
	for i := range 8 {
		fmt.Fprintf(&b, "BenchmarkPerf/profile=basic/scenario=ttft-tpot/prompt=short/conc=1 1 %d tpot-p50-ns\n", int(10e6*slow)+i*10000)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPredict: comparisons and runs from the candidates and the gate's
// settings.
func TestPredict(t *testing.T) {
	t.Parallel()
	p := Predict(Config{Candidates: builds(t, "ggggbbbb"), Gate: upgrade.Config{
		Suite: suite.Config{Size: scenario.Quick}, Points: []string{"profile=basic/scenario=ttft-tpot/prompt=short"}, MinPairs: 6, MaxPairs: 10}})
	if p.Comparisons != 4 || p.Points != 1 || p.Runs != [2]int{36, 80} {
		t.Errorf("prediction %+v: want 4 comparisons of 1 point, 36 to 80 runs", p)
	}
	if got := []int{MaxComparisons(2), MaxComparisons(3), MaxComparisons(8), MaxComparisons(9), MaxComparisons(500)}; !slices.Equal(got, []int{1, 2, 4, 4, 10}) {
		t.Errorf("MaxComparisons(2, 3, 8, 9, 500) = %v", got)
	}
}

// TestPage: bisect.html lists every step with its evidence and marks the
// first bad build.
func TestPage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := &fakeGate{}
	res, err := Run(context.Background(), Config{Candidates: builds(t, "ggggbbbb"), Dir: dir, compare: f.compare})
	if err != nil {
		t.Fatal(err)
	}
	path, err := res.WritePage(dir, "builds.txt")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	for _, want := range []string{"first bad build: line 5 (sim --sim-seed 4 --sim-slowdown 1.25)", "the first bad build (step", "SAME after 6 pairs", "DIFFERENT after 6 pairs",
		"at most 4 comparisons", `href="line-4-vs-line-1/"`, "known good (the reference of every step)", "bad (after a bad build)"} {
		if !strings.Contains(page, want) {
			t.Errorf("bisect.html lacks %q", want)
		}
	}
	if n := strings.Count(page, "<tr><td class=\"num\">"); n != len(res.Steps)+8 {
		t.Errorf("%d table rows, want %d steps and 8 builds", n, len(res.Steps))
	}
}
