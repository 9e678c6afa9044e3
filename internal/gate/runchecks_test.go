package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate/gatetest"
	"github.com/vllmperf/vllmperf/internal/gate/input"
)

func TestRunChecksFailTheGate(t *testing.T) {
	set := loadThresholds(t, "thresholds.yaml")
	const bench = "Perf/profile=basic/scenario=concurrency-sweep/conc=8"
	next := gatetest.WithFailBlock(t, filepath.Join("testdata", "bench", "noise.txt"), bench, input.CheckLine("FAIL", "reconcile/generation_tokens", "the server counted 8192 tokens, the client 8320"))
	rep, err := Compare(readBench(t, "base.txt"), next, set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Outcome(); got != OutcomeFail {
		t.Fatalf("outcome = %s, want FAIL (%s)", got, rep.Headline())
	}
	wantName := bench + ": reconcile/generation_tokens (FAIL)"
	if !strings.Contains(rep.Headline(), "1 failed check") || !strings.Contains(rep.Headline(), wantName) {
		t.Errorf("headline %q does not name the failed check %q", rep.Headline(), wantName)
	}
}

func TestInvalidRunIsNoRegression(t *testing.T) {
	set := loadThresholds(t, "thresholds.yaml")
	plain, err := Compare(readBench(t, "base.txt"), readBench(t, "regression.txt"), set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var regressed string
	for _, row := range plain.Rows {
		if row.Verdict == Regression {
			regressed = row.Name
			break
		}
	}
	if regressed == "" {
		t.Fatal("the regression fixture has no regression")
	}
	// Every regressed benchmark had a run on a throttled GPU.
	var lines []string
	seen := map[string]bool{}
	for _, row := range plain.Rows {
		if row.Verdict == Regression && !seen[row.Name] {
			seen[row.Name] = true
			lines = append(lines, "--- FAIL: Benchmark"+row.Name+"\n    perf_test.go:1: "+input.CheckLine(input.StatusInvalid, "gpu/throttle", "SW power cap in 4 of 9 samples"))
		}
	}
	data, err := os.ReadFile(filepath.Join("testdata", "bench", "regression.txt"))
	if err != nil {
		t.Fatal(err)
	}
	next, err := input.Read(strings.NewReader(string(data)+strings.Join(lines, "\n")+"\n"), "regression.txt")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Compare(readBench(t, "base.txt"), next, set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Outcome(); got != OutcomeInvalid || got.ExitCode() != 2 {
		t.Fatalf("outcome = %s (exit %d), want INVALID (exit 2): %s", got, got.ExitCode(), rep.Headline())
	}
	if n := rep.Count(Regression); n != 0 {
		t.Errorf("%d rows still called REGRESSION on an INVALID run", n)
	}
	if n := rep.Count(InvalidVerdict); n != plain.Count(Regression) {
		t.Errorf("%d INVALID rows, want the %d regressions", n, plain.Count(Regression))
	}
	if !strings.Contains(rep.Headline(), "gpu/throttle") {
		t.Errorf("headline %q does not name the evidence", rep.Headline())
	}
}

func TestEveryBenchmarkFailed(t *testing.T) {
	text := "--- FAIL: BenchmarkPerf/profile=basic/scenario=startup\n    perf_test.go:185: " + input.CheckLine("FAIL", "reconcile/generation_tokens", "Δ 16, client 17") + "\n--- FAIL: BenchmarkPerf/profile=basic\nFAIL\n"
	next, err := input.Read(strings.NewReader(text), "new.txt")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Compare(readBench(t, "base.txt"), next, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome() != OutcomeFail || len(rep.OnlyBaseline) == 0 || !strings.Contains(rep.Headline(), "reconcile/generation_tokens") {
		t.Errorf("every benchmark failed: %s, %d not run", rep.Headline(), len(rep.OnlyBaseline))
	}
	if len(rep.OnlyBaseline) > 0 && !strings.HasPrefix(rep.OnlyBaseline[0], "Perf/profile=") || strings.HasSuffix(rep.OnlyBaseline[0], "-2") {
		t.Errorf("baseline names %v: want Perf/profile=... without the -N suffix", rep.OnlyBaseline[:1])
	}
}
