package gate

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate/gatemath"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/testphase"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

const header = "goos: linux\nbackend: sim\ngpu: sim:rtx4090\nmodel: Qwen/Qwen3-0.6B\nimage: in-process\n"

// runs writes n runs of one benchmark line; value(i) gives run i's metrics
// ("123 ttft-p50-ns 45 tok/s").
func runs(name string, n int, value func(i int) string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "BenchmarkPerf/%s\t1\t%s\n", name, value(i))
	}
	return b.String()
}

// steady is a metric line whose values wiggle by ±1% around v.
func steady(unit string, v float64) func(int) string {
	return func(i int) string { return fmt.Sprintf("%g %s", v*(1+0.01*float64(i%3-1)), unit) }
}

func parse(t *testing.T, name, text string) *input.Input {
	t.Helper()
	in, err := input.Read(strings.NewReader(text), name)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func TestReadErrors(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	for _, tc := range []struct {
		name string
		text string
		want string // part of the error
	}{
		// A value that is not a number, with its line.
		{"bad value", header + "BenchmarkPerf/profile=basic/scenario=x-2\t1\tfast ns/op\n", "bad.txt:6: parsing measurement"},
		// A line cut short, as a killed run leaves it.
		{"cut line", header + "BenchmarkPerf/profile=basic/scenario=x-2\t1\t1234\n", "bad.txt:6: missing units"},
		// Not benchmark output at all.
		{"no results", "PASS\nok  \tgithub.com/vllmperf/vllmperf\t1.2s\n", "no benchmark results"},
		// A direction the gate cannot read.
		{"bad better", header + "Unit tok/s better=up\n" + runs("profile=basic/scenario=x-2", 1, steady("tok/s", 100)), "bad.txt:6: Unit tok/s better=up: want better=lower"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := input.Read(strings.NewReader(tc.text), "bad.txt")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestCompareErrors(t *testing.T) {
	t.Parallel()
	base := header + "Unit tok/s better=higher\n" + runs("profile=basic/scenario=a-2", 6, steady("tok/s", 100))
	for _, tc := range []struct {
		name string
		next string
		want string
	}{
		// Nothing to compare.
		{"no overlap", header + runs("profile=basic/scenario=b-2", 6, steady("tok/s", 100)),
			"no benchmark appears in both base.txt and new.txt: the baseline has Perf/profile=basic/scenario=a, the new results Perf/profile=basic/scenario=b"},
		// The files disagree on a direction.
		{"direction conflict", header + "Unit tok/s better=lower\n" + runs("profile=basic/scenario=a-2", 6, steady("tok/s", 100)),
			"base.txt:6 says Unit tok/s better=higher but new.txt:6 says better=lower"},
		// Another model.
		{"model", strings.Replace(header, "Qwen/Qwen3-0.6B", "meta-llama/Llama-3.1-8B", 1) + runs("profile=basic/scenario=a-2", 6, steady("tok/s", 100)),
			`model is "Qwen/Qwen3-0.6B" in base.txt but "meta-llama/Llama-3.1-8B" in new.txt (Perf/profile=basic/scenario=a)`},
		// A key one side does not write.
		{"image absent", strings.Replace(header, "image: in-process\n", "", 1) + runs("profile=basic/scenario=a-2", 6, steady("tok/s", 100)),
			`image is "in-process" in base.txt but (none) in new.txt`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Compare(parse(t, "base.txt", base), parse(t, "new.txt", tc.next), nil, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestCompareShapes(t *testing.T) {
	t.Parallel()
	both := func(p string) string {
		return runs(p, 6, func(i int) string {
			return steady("ttft-p50-ns", 4e7)(i) + " " + steady("tok/s", 100)(i)
		})
	}
	for _, tc := range []struct {
		name      string
		base, new string
		set       string // thresholds.yaml content
		want      Outcome
		check     func(t *testing.T, rep *Report)
	}{
		// A gated metric the new run lacks fails the gate by name.
		{name: "missing metric", base: header + both("profile=basic/scenario=a-2"),
			new:  header + runs("profile=basic/scenario=a-2", 6, steady("tok/s", 100)),
			want: OutcomeFail,
			check: func(t *testing.T, rep *Report) {
				if !hasVerdict(rep, "ttft-p50-ns", Missing) {
					t.Error("ttft-p50-ns is not MISSING")
				}
			}},
		// A benchmark the new run lacks makes the gate inconclusive, not a pass.
		{name: "benchmark not run", base: header + both("profile=basic/scenario=a-2") + both("profile=basic/scenario=b-2"),
			new:  header + both("profile=basic/scenario=a-2"),
			want: OutcomeInconclusive,
			check: func(t *testing.T, rep *Report) {
				if len(rep.OnlyBaseline) != 1 || rep.OnlyBaseline[0] != "Perf/profile=basic/scenario=b" {
					t.Errorf("only in baseline: %v", rep.OnlyBaseline)
				}
			}},
		// A new benchmark without baseline is listed, its limits checked.
		{name: "new benchmark", base: header + both("profile=basic/scenario=a-2"),
			new:  header + both("profile=basic/scenario=a-2") + both("profile=basic/scenario=b-2"),
			set:  "slo:\n  tok/s: {min: 200}\n",
			want: OutcomeFail,
			check: func(t *testing.T, rep *Report) {
				if len(rep.OnlyNew) != 1 || rep.CountChecks(CheckFail) != 2 {
					t.Errorf("only new %v, %d failed checks; want 1 and 2 (tok/s < 200 in both benchmarks)", rep.OnlyNew, rep.CountChecks(CheckFail))
				}
			}},
		// Another core count (the -N suffix) still lines up, with a note.
		{name: "gomaxprocs", base: header + both("profile=basic/scenario=a-2"),
			new:  header + both("profile=basic/scenario=a-16"),
			want: OutcomePass,
			check: func(t *testing.T, rep *Report) {
				if len(rep.Rows) != 2 || len(rep.Warnings) == 0 || !strings.Contains(rep.Warnings[0], "GOMAXPROCS differs: 2 in the baseline, 16") {
					t.Errorf("rows %d, warnings %v", len(rep.Rows), rep.Warnings)
				}
			}},
		// thresholds.yaml gives a direction to a unit without a Unit line.
		{name: "direction from thresholds", base: header + runs("profile=basic/scenario=a-2", 6, steady("kv-peak-%", 40)),
			new:  header + runs("profile=basic/scenario=a-2", 6, steady("kv-peak-%", 60)),
			set:  "better:\n  kv-peak-%: lower\n",
			want: OutcomeFail,
			check: func(t *testing.T, rep *Report) {
				var kv *Row
				for i := range rep.Rows {
					if rep.Rows[i].Unit == "kv-peak-%" {
						kv = &rep.Rows[i]
					}
				}
				if kv == nil || kv.Verdict != Regression || kv.DirectionFrom != "thresholds" {
					t.Errorf("kv-peak-%% row: %+v", kv)
				}
			}},
		// Without it the unit is shown, not gated.
		{name: "no direction", base: header + runs("profile=basic/scenario=a-2", 6, steady("kv-peak-%", 40)),
			new:  header + runs("profile=basic/scenario=a-2", 6, steady("kv-peak-%", 60)),
			want: OutcomePass,
			check: func(t *testing.T, rep *Report) {
				if !hasVerdict(rep, "kv-peak-%", NotGated) {
					t.Error("kv-peak-% is gated")
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			set, err := thresholds.Parse("t.yaml", []byte(tc.set))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Compare(parse(t, "base.txt", tc.base), parse(t, "new.txt", tc.new), set, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := rep.Outcome(); got != tc.want {
				t.Errorf("outcome %s, want %s (%s)", got, tc.want, rep.Headline())
			}
			tc.check(t, rep)
		})
	}
}

func TestHolm(t *testing.T) {
	t.Parallel()
	// Sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, then 0.04·1 =
	// 0.04 is raised to 0.06 to keep the order.
	got := gatemath.Holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-15 {
			t.Fatalf("holm = %v, want %v", got, want)
		}
	}
	if got := gatemath.Holm([]float64{0.5, 0.9}); got[0] != 1 || got[1] != 1 {
		t.Errorf("holm caps at 1: %v", got)
	}
}

// benchmath's table of the smallest p its U test can give (anone.go).
func TestMinUTestP(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]float64{3: 0.1, 4: 0.02857142857142857, 6: 0.0021645021645021645, 9: 4.113533525298231e-05} {
		if got := gatemath.MinUTestP(n); math.Abs(got-want) > 1e-12*want {
			t.Errorf("minUTestP(%d) = %v, want %v", n, got, want)
		}
	}
}

func TestFiniteCIRuns(t *testing.T) {
	t.Parallel()
	// benchmath: "need >= 6 samples for confidence interval at level 0.95".
	if got := gatemath.FiniteCIRuns(0.95); got != 6 {
		t.Errorf("finiteCIRuns(0.95) = %d, want 6", got)
	}
	if got := gatemath.FiniteCIRuns(0.99); got != 8 {
		t.Errorf("finiteCIRuns(0.99) = %d, want 8", got)
	}
}

func TestRunsEstimatesMove(t *testing.T) {
	t.Parallel()
	// A larger effect needs fewer runs to detect.
	if small, large := gatemath.RunsToDetect(0.7, 0.05, 50, 10), gatemath.RunsToDetect(0.9, 0.05, 50, 10); !(large < small) {
		t.Errorf("θ 0.9 needs %d runs, θ 0.7 %d: want fewer for the larger effect", large, small)
	}
	// More tests to correct for need more runs.
	if few, many := gatemath.RunsToDetect(0.8, 0.05, 1, 10), gatemath.RunsToDetect(0.8, 0.05, 100, 10); !(few < many) {
		t.Errorf("m=1 needs %d runs, m=100 %d", few, many)
	}
	// No effect at all cannot be detected.
	if got := gatemath.RunsToDetect(0.5, 0.05, 1, 10); got != -1 {
		t.Errorf("θ 0.5: %d runs, want -1", got)
	}
	s := func(med, lo, hi float64) *gatemath.Summary {
		return &gatemath.Summary{N: 10, Median: med, Lo: lo, Hi: hi, Values: []float64{lo, hi}}
	}
	b, n := s(100, 98, 102), s(100, 98, 102)
	wide, narrow := gatemath.RunsToBound(units.Lower, b, n, 0.02, 0.95), gatemath.RunsToBound(units.Lower, b, n, 0.04, 0.95)
	if !(narrow < wide) || narrow < 1 {
		t.Errorf("margin 4%% needs %d runs, 2%% %d: want fewer with more room", narrow, wide)
	}
}

func TestDecision(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rows []Row
		want Decision
		code int
	}{
		// A regression decides, whatever else is undecided.
		{[]Row{{Verdict: Inconclusive, RunsNeeded: 20}, {Verdict: Regression}}, Different, 1},
		// Improvements and unchanged rows are a pass.
		{[]Row{{Verdict: Improvement}, {Verdict: NoChange}, {Verdict: NotGated}}, Same, 0},
		// Anything undecided asks for more runs.
		{[]Row{{Verdict: NoChange}, {Verdict: Inconclusive, RunsNeeded: 14}}, Unknown, 3},
	} {
		rep := &Report{Rows: tc.rows}
		if got := rep.Decision(); got != tc.want {
			t.Errorf("%v: decision %s, want %s", tc.rows, got, tc.want)
		}
		if got := rep.Outcome().ExitCode(); got != tc.code {
			t.Errorf("%v: exit %d, want %d", tc.rows, got, tc.code)
		}
	}
}

// TestHolmRuns checks the fewest runs a side from which the exact U test
// can pass the first step of Holm's correction.
func TestHolmRuns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		m, want int
	}{
		{1, 4},   // one test: 2/C(8,4) = 0.029 < 0.05
		{62, 7},  // the fixtures' 62 rows: 2/C(14,7) = 5.8e-4 < 8.1e-4
		{940, 9}, // the suite's 940 rows: 2/C(18,9) = 4.1e-5 < 5.3e-5
	} {
		if got := gatemath.HolmRuns(0.05, tc.m); got != tc.want {
			t.Errorf("holmRuns(0.05, %d) = %d, want %d", tc.m, got, tc.want)
		}
	}
}
