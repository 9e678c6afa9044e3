package gate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/docfigures"
	"github.com/vllmperf/vllmperf/internal/gate/gatetest"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/gate/runnerctl"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// runnerBench is runs runs (10 when 0) of 6 points of profile basic (one
// point when runs are given): TPOT p50 about
// 10 ms and tok/s about 500 (1% noise), the code's figures worse by
// code (0.1: 10% slower), and, unless noControl, the runner control
// about 2.5 µs a block (serial) and 2.7 µs (parallel), 2% noise, slower
// by runner (0.1: the runner took 10% longer).
func runnerBench(rng *rand.Rand, code, runner float64, noControl bool, runs int) string {
	points := 6
	if runs > 0 {
		points = 1
	} else {
		runs = 10
	}
	var b strings.Builder
	b.WriteString("Unit tpot-p50-ns better=lower\nUnit tok/s better=higher\n")
	b.WriteString("Unit runner-cpu-ns better=none\nUnit runner-par-ns better=none\n")
	noise := func(cv float64) float64 { return math.Exp(cv * rng.NormFloat64()) }
	for range runs {
		for p := range points {
			fmt.Fprintf(&b, "BenchmarkPerf/profile=basic/scenario=s/conc=%d 1 %.0f tpot-p50-ns %.2f tok/s", 1<<p,
				1e7*(1+code)*noise(0.01), 500/(1+code)*noise(0.01))
			if !noControl {
				fmt.Fprintf(&b, " %.1f %s %.1f %s", 2500*(1+runner)*noise(0.02), units.RunnerCPU, 2700*(1+runner)*noise(0.02), units.RunnerParallel)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// TestRunnerControl: the gate names a slower runner instead of calling
// what it explains (up to its slowdown's lower bound) a REGRESSION, names
// a faster runner instead of passing what it could hide, and still fails
// a real slowdown on a runner that did not move.
func TestRunnerControl(t *testing.T) {
	t.Parallel()
	type side struct {
		code, runner float64
		noControl    bool
		runs         int
	}
	for _, tc := range []struct {
		name        string
		base, next  side
		interleaved bool // gate.Options.Interleaved: the upgrade gate's sides
		want        Outcome
		wantRows    Verdict // every TPOT row's verdict, "" for any
		wantHead    string  // in the headline
		wantWarning string  // in a warning ("" for no runner warning)
		wantChecks  CheckStatus
	}{
		{name: "A/A on a quiet runner: pass, the runner within its noise",
			want: OutcomePass, wantChecks: CheckPass},
		{name: "a real 10% slowdown on a quiet runner fails",
			next: side{code: 0.10}, want: OutcomeFail, wantRows: Regression, wantChecks: CheckPass},
		{name: "a real 10% slowdown, the runner 1% slower (within its noise): still a regression",
			next: side{code: 0.10, runner: 0.01}, want: OutcomeFail, wantRows: Regression, wantChecks: CheckPass},
		{name: "6% worse on a runner 6% slower: over the slowdown's lower bound (4.8%), a regression",
			next: side{code: 0.06, runner: 0.06}, want: OutcomeFail, wantRows: Regression,
			wantWarning: "the runner was slower", wantChecks: CheckPass},
		{name: "15% worse on a runner 20% slower: within the slowdown's lower bound, INVALID, the runner named",
			next: side{code: 0.15, runner: 0.20}, want: OutcomeInvalid, wantRows: InvalidVerdict,
			wantHead: "slower runner: runner-cpu-ns +", wantWarning: "the runner was slower", wantChecks: CheckInvalid},
		{name: "8 busy loops: the runner 4× slower, the code's figures 20% worse: INVALID",
			next: side{code: 0.20, runner: 3}, want: OutcomeInvalid, wantRows: InvalidVerdict,
			wantHead: "slower runner: runner-cpu-ns +298.3% (noise ±3.0%)", wantWarning: "the runner was slower", wantChecks: CheckInvalid},
		{name: "30% worse on a runner 6% slower: more than it explains, a regression",
			next: side{code: 0.30, runner: 0.06}, want: OutcomeFail, wantRows: Regression,
			wantWarning: "the runner was slower", wantChecks: CheckPass},
		{name: "a slower runner and no regression: pass, noted",
			next: side{runner: 0.5}, want: OutcomePass, wantWarning: "no regression to explain", wantChecks: CheckPass},
		{name: "a faster runner: INVALID, a regression could hide behind it (as a slower one explains)",
			next: side{runner: -0.3}, want: OutcomeInvalid, wantRows: InvalidVerdict, wantWarning: "could hide behind the faster runner", wantChecks: CheckInvalid},
		{name: "a runner 4% faster and a 10% slowdown: still a regression",
			next: side{code: 0.10, runner: -0.04}, want: OutcomeFail, wantRows: Regression, wantWarning: "the runner was faster", wantChecks: CheckPass},
		{name: "a baseline without the control: the runner could not be compared, a real slowdown still fails",
			base: side{noControl: true}, next: side{code: 0.10}, want: OutcomeFail, wantRows: Regression,
			wantWarning: "the baseline records no runner control"},
		{name: "a baseline without the control never fails because of it",
			base: side{noControl: true}, next: side{runner: 3}, want: OutcomePass,
			wantWarning: "the baseline records no runner control"},
		{name: "new results without the control",
			next: side{noControl: true}, want: OutcomePass, wantWarning: "the new results record no runner control"},
		{name: "two runs a side are too few to compare the runner",
			base: side{runs: 2}, next: side{code: 0.30, runner: 3, runs: 2}, wantWarning: "fewer than 3 a side", want: OutcomeInconclusive},
		{name: "interleaved: NEW 50% slower, its control 80% slower (a server on the client's host): still a regression, the control reported",
			next: side{code: 0.50, runner: 0.80}, interleaved: true, want: OutcomeFail, wantRows: Regression,
			wantWarning: "differed between the interleaved sides", wantChecks: CheckPass},
		{name: "interleaved: A/A with the control moved: pass, reported",
			next: side{runner: 0.30}, interleaved: true, want: OutcomePass,
			wantWarning: "it explains no regression", wantChecks: CheckPass},
		{name: "interleaved: a steady control, no warning",
			next: side{code: 0.10}, interleaved: true, want: OutcomeFail, wantRows: Regression, wantChecks: CheckPass},
		{name: "neither side records it (another tool's files): compared as before",
			base: side{noControl: true}, next: side{code: 0.10, noControl: true}, want: OutcomeFail, wantRows: Regression},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 3))
			base := parse(t, "base", runnerBench(rng, tc.base.code, tc.base.runner, tc.base.noControl, tc.base.runs))
			next := parse(t, "new", runnerBench(rng, tc.next.code, tc.next.runner, tc.next.noControl, tc.next.runs))
			rep, err := Compare(base, next, nil, Options{Interleaved: tc.interleaved})
			if err != nil {
				t.Fatal(err)
			}
			if got := rep.Outcome(); got != tc.want {
				t.Errorf("outcome %s, want %s: %s", got, tc.want, rep.Headline())
			}
			for _, row := range rep.Rows {
				if row.Unit == units.TPOTP50 && tc.wantRows != "" && row.Verdict != tc.wantRows {
					t.Errorf("%s %s: %s (%s), want %s", row.Name, row.Unit, row.Verdict, row.Reason, tc.wantRows)
				}
				if row.Verdict == InvalidVerdict && !strings.Contains(row.Reason, "within what the slower runner explains") && !strings.Contains(row.Reason, "on a runner at least") {
					t.Errorf("%s %s: INVALID without naming the runner: %s", row.Name, row.Unit, row.Reason)
				}
			}
			if !strings.Contains(rep.Headline(), tc.wantHead) {
				t.Errorf("headline %q, want it to contain %q", rep.Headline(), tc.wantHead)
			}
			var runnerWarnings []string
			for _, w := range rep.Warnings {
				if strings.Contains(w, "runner") {
					runnerWarnings = append(runnerWarnings, w)
				}
			}
			switch {
			case tc.wantWarning == "" && len(runnerWarnings) > 0:
				t.Errorf("runner warnings %q, want none", runnerWarnings)
			case tc.wantWarning != "" && !strings.Contains(strings.Join(runnerWarnings, "\n"), tc.wantWarning):
				t.Errorf("runner warnings %q, want one saying %q", runnerWarnings, tc.wantWarning)
			}
			n := 0
			for _, c := range rep.Checks {
				if c.Kind != RunnerCheckKind {
					continue
				}
				n++
				if c.Unit == units.RunnerCPU && c.Status != tc.wantChecks {
					t.Errorf("runner check %s: %s (%s), want %s", c.Unit, c.Status, c.Reason, tc.wantChecks)
				}
				if c.Status == CheckPass && strings.Contains(c.Reason, "slower") && !strings.Contains(c.Reason, "it passes") {
					t.Errorf("runner check %s passes beside a slowdown without saying why: %s", c.Unit, c.Reason)
				}
			}
			if want := map[bool]int{true: 0, false: 2}[tc.base.noControl || tc.next.noControl || tc.base.runs == 2]; n != want {
				t.Errorf("%d runner checks, want %d", n, want)
			}
			if tc.want == OutcomeInvalid && len(rep.RegressedProfiles()) > 0 {
				t.Errorf("INVALID, yet profiles %v regressed", rep.RegressedProfiles())
			}
		})
	}
}

// TestRunnerTooFewSharedRuns: too few runs of the benchmarks both sides
// ran: the runner control is not compared, and the report says why.
func TestRunnerTooFewSharedRuns(t *testing.T) {
	t.Parallel()
	lines := gatetest.RunnerLines
	base := parse(t, "base", lines(map[string]float64{"conc=1": 100, "conc=32": 130}, 4))
	// Too few runs of the shared benchmarks: not compared, said why.
	next := parse(t, "new", lines(map[string]float64{"conc=32": 200}, 2))
	rep, err := Compare(base, next, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(rep.Warnings, "\n"); !strings.Contains(w, "of the benchmarks both ran, fewer than 3 a side") {
		t.Errorf("warnings %q, want the runner not compared on too few shared runs", w)
	}
}

// TestFailedLaterRepetition: go test -count N writes a later repetition's
// failure after the benchmark's name, on its line; the file is read (not
// malformed), each failed run's checks once, under the benchmark's name
// without the -N suffix, so its rows can be made INVALID.
func TestFailedLaterRepetition(t *testing.T) {
	t.Parallel()
	in, err := input.ReadFile("testdata/bench/failed-later-run.txt")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, rc := range in.RunChecks {
		got[rc.Benchmark+" "+rc.Status+" "+rc.Name]++
	}
	want := map[string]int{
		"Perf/profile=basic/scenario=startup FAIL ttft_gap":                                1,
		"Perf/profile=basic/scenario=startup INVALID sim_real_time":                        1,
		"Perf/profile=basic/scenario=ttft-tpot/prompt=short/conc=1 INVALID sim_real_time":  1,
		"Perf/profile=basic/scenario=ttft-tpot/prompt=medium/conc=1 INVALID sim_real_time": 1,
	}
	if len(got) != len(want) {
		t.Errorf("run checks %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: %d, want %d (all: %v)", k, got[k], n, got)
		}
	}
	if len(in.Results) == 0 {
		t.Error("no result lines read")
	}
}

// TestFiguresRunner computes docs/gate.md's tables of the runner
// experiment from its recorded bench files (testdata/runner/quiet on the
// idle 2-core machine, testdata/runner/busy on it shared with other
// builds; recorded with record.sh): the baseline A against an unchanged
// run B, a run with --sim-slowdown 1.10 D and a run under 8 busy loops C.
func TestFiguresRunner(t *testing.T) {
	t.Parallel()
	for _, rec := range []struct{ dir, marker string }{
		{"testdata/runner/quiet", "gate-runner"},
		{"testdata/runner/busy", "gate-runner-busy"},
	} {
		docfigures.Sync(t, "docs/gate.md", rec.marker, runnerTable(t, rec.dir))
	}
}

// runnerTable is the runner experiment's table of the recording in dir.
func runnerTable(t *testing.T, dir string) string {
	t.Helper()
	base, err := input.ReadFile(filepath.Join(dir, "A.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("\n| new side | runner-cpu-ns vs the baseline | verdict |\n| --- | --- | --- |\n")
	for _, side := range []struct{ file, what string }{
		{"B.txt", "unchanged (A/A)"},
		{"D.txt", "`--sim-slowdown 1.10`"},
		{"C.txt", "unchanged, 8 busy loops (`timeout 120 sh -c 'while :; do :; done'` ×8)"},
	} {
		next, err := input.ReadFile(filepath.Join(dir, side.file))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Compare(base, next, thresholds.Default(), Options{}) // as vllmperf gate
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", side.what, runnerCell(runnerctl.Shifts(base, next)), verdictCell(rep))
	}
	return b.String()
}

// runnerCell is the serial control's move: "+18.2% (noise ±27.0%): within".
func runnerCell(shifts []runnerctl.Shift) string {
	for _, s := range shifts {
		if s.Unit != units.RunnerCPU {
			continue
		}
		how := "within"
		switch {
		case s.Slower():
			how = "slower"
		case s.Moved():
			how = "faster"
		}
		return fmt.Sprintf("%+.1f%% (noise ±%.1f%%): %s", 100*s.Change, 100*s.Noise, how)
	}
	return "not recorded"
}

// verdictCell is the gate's outcome and what decided it.
func verdictCell(rep *Report) string {
	parts := []string{fmt.Sprintf("%d REGRESSION rows", rep.Count(Regression)), fmt.Sprintf("%d INVALID rows", rep.Count(InvalidVerdict))}
	for _, p := range rep.Profiles {
		switch {
		case p.Regression:
			parts = append(parts, fmt.Sprintf("profile %s REGRESSION (%+.1f%%)", p.Profile, 100*p.Effect))
		case p.Explained != "":
			parts = append(parts, fmt.Sprintf("profile %s INVALID (%+.1f%%, within what the slower runner explains)", p.Profile, 100*p.Effect))
		}
	}
	checks := map[string]int{}
	var order []string
	for _, c := range rep.Checks {
		if c.Kind == RunCheckKind {
			k := fmt.Sprintf("`%s` %s", c.Unit, c.Status)
			if checks[k] == 0 {
				order = append(order, k)
			}
			checks[k]++
		}
	}
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, checks[k]))
	}
	out := fmt.Sprintf("%s, exit %d: %s", rep.Outcome(), rep.Outcome().ExitCode(), strings.Join(parts, ", "))
	if w := rep.runnerWords(); w != "" {
		out += "; " + w
	}
	return out
}

// TestRunnerHungryServer: a server build on the client's host that burns
// more CPU under load slows the runner control's probes taken during the
// runs (runner-cpu-ns +15%) but not those before and after them
// (runner-idle-ns). Judged by the idle probes, its 12% slowdown fails;
// files without them (recorded before runner-idle-ns) read the control as
// a slower runner and would excuse it.
func TestRunnerHungryServer(t *testing.T) {
	t.Parallel()
	side := func(seed uint64, code, during float64, idle bool) *input.Input {
		rng := rand.New(rand.NewPCG(seed, 9))
		var b strings.Builder
		b.WriteString("Unit tpot-p50-ns better=lower\nUnit tok/s better=higher\n")
		noise := func(cv float64) float64 { return math.Exp(cv * rng.NormFloat64()) }
		for range 10 {
			for p := range 6 {
				fmt.Fprintf(&b, "BenchmarkPerf/profile=basic/scenario=s/conc=%d 1 %.0f tpot-p50-ns %.2f tok/s %.1f %s %.1f %s", 1<<p,
					1e7*(1+code)*noise(0.01), 500/(1+code)*noise(0.01), 2500*(1+during)*noise(0.02), units.RunnerCPU, 2700*noise(0.02), units.RunnerParallel)
				if idle {
					fmt.Fprintf(&b, " %.1f %s", 2500*noise(0.02), units.RunnerIdle)
				}
				b.WriteString("\n")
			}
		}
		return parse(t, fmt.Sprintf("side%d", seed), b.String())
	}
	for _, tc := range []struct {
		name string
		idle bool
		want Outcome
	}{
		{"judged by the idle probes: a regression", true, OutcomeFail},
		{"without them: excused as a slower runner (the earlier files' flaw)", false, OutcomeInvalid},
	} {
		rep, err := Compare(side(1, 0, 0, tc.idle), side(2, 0.12, 0.15, tc.idle), nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.Outcome(); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, rep.Headline(), tc.want)
		}
		judged := map[string]bool{}
		for _, c := range rep.Checks {
			if c.Kind == RunnerCheckKind {
				judged[c.Unit] = true
			}
		}
		if judged[units.RunnerIdle] != tc.idle || judged[units.RunnerCPU] == tc.idle {
			t.Errorf("%s: runner checks on %v", tc.name, judged)
		}
	}
}
