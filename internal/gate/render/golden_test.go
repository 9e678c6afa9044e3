package render

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// readBench reads a bench fixture of the gate (../testdata/bench), named
// as the gate's own tests name it: the reports print the name.
func readBench(t *testing.T, name string) *input.Input {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "bench", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, err := input.Read(f, filepath.Join("testdata", "bench", name))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// loadThresholds reads a thresholds file of the gate's testdata, named as
// the gate's own tests name it.
func loadThresholds(t *testing.T, name string) *thresholds.Set {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	set, err := thresholds.Parse(filepath.Join("testdata", name), data)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		base, next string
		thresholds string // in testdata; "" for the defaults
		force      bool
		want       gate.Outcome
		// wantRow, when set, must be the verdict of that unit somewhere.
		wantUnit    string
		wantVerdict gate.Verdict
	}{
		// Another run of the same code passes.
		{name: "noise", base: "base.txt", next: "noise.txt", thresholds: "thresholds.yaml", want: gate.OutcomePass},
		// TTFT up 20-25% at saturation fails.
		{name: "regression", base: "base.txt", next: "regression.txt", thresholds: "thresholds.yaml", want: gate.OutcomeFail, wantUnit: "ttft-p50-ns", wantVerdict: gate.Regression},
		// Faster decoding passes and is called an improvement.
		{name: "improvement", base: "base.txt", next: "improvement.txt", thresholds: "thresholds.yaml", want: gate.OutcomePass, wantUnit: "tok/s", wantVerdict: gate.Improvement},
		// Less tok/s is worse: higher is better for throughput.
		{name: "throughput-drop", base: "base.txt", next: "throughput-drop.txt", thresholds: "thresholds.yaml", want: gate.OutcomeFail, wantUnit: "tok/s", wantVerdict: gate.Regression},
		// Three runs a side cannot decide.
		{name: "three-samples", base: "base-3.txt", next: "new-3.txt", thresholds: "thresholds.yaml", want: gate.OutcomeInconclusive, wantUnit: "ttft-p50-ns", wantVerdict: gate.Inconclusive},
		// MLPerf's interactive limits are breached at conc=32, though nothing regressed.
		{name: "slo-breach", base: "base.txt", next: "noise.txt", thresholds: "slo-interactive.yaml", want: gate.OutcomeFail},
		// Two runs with failed requests fail max_error_rate.
		{name: "errors", base: "base.txt", next: "errors.txt", thresholds: "thresholds.yaml", want: gate.OutcomeFail},
		// --force compares another GPU's results, with a warning. Noise only:
		// itl-p99 at conc=8 sits near its 10% effect, but the profile's tail
		// test finds nothing, so the gate passes.
		{name: "forced-gpu", base: "base.txt", next: "other-gpu.txt", thresholds: "thresholds.yaml", force: true, want: gate.OutcomePass, wantUnit: "itl-p99-ns", wantVerdict: gate.NoRegression},
		// A limit on a unit nothing reports is never a silent pass.
		{name: "unchecked-slo", base: "base.txt", next: "noise.txt", thresholds: "slo-misspelt.yaml", want: gate.OutcomeInconclusive},
		// The built-in defaults: 5% everywhere; a headline row the intervals
		// cannot bound within 5% at 10 runs has no regression either: it passes.
		{name: "defaults", base: "base.txt", next: "noise.txt", want: gate.OutcomePass, wantUnit: "cold-ttft-ns", wantVerdict: gate.NoRegression},
		// Asked for equivalence (require_no_change), the same row is undecided.
		{name: "require-no-change", base: "base.txt", next: "noise.txt", thresholds: "require-no-change.yaml", want: gate.OutcomeInconclusive, wantUnit: "cold-ttft-ns", wantVerdict: gate.Inconclusive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var set *thresholds.Set
			if tc.thresholds != "" {
				set = loadThresholds(t, tc.thresholds)
			}
			rep, err := gate.Compare(readBench(t, tc.base), readBench(t, tc.next), set, gate.Options{Force: tc.force, ForceFlag: "--force"})
			if err != nil {
				t.Fatal(err)
			}
			if got := rep.Outcome(); got != tc.want {
				t.Errorf("outcome = %s, want %s (%s)", got, tc.want, rep.Headline())
			}
			if tc.wantUnit != "" && !hasVerdict(rep, tc.wantUnit, tc.wantVerdict) {
				t.Errorf("no %s row is %s", tc.wantUnit, tc.wantVerdict)
			}
			for _, format := range Formats {
				if format == "json" && !jsonGolden[tc.name] {
					continue
				}
				var buf bytes.Buffer
				if err := Of(rep).WriteFormat(&buf, format); err != nil {
					t.Fatal(err)
				}
				golden(t, tc.name+"."+map[string]string{"text": "brief.txt", "full": "txt", "summary": "summary.txt", "markdown": "md", "json": "json"}[format], buf.Bytes())
			}
		})
	}
}

// jsonGolden are the cases whose JSON is kept as a golden file too (the
// JSON of one is some 4000 lines).
var jsonGolden = map[string]bool{"regression": true, "three-samples": true}

func hasVerdict(rep *gate.Report, unit string, v gate.Verdict) bool {
	for _, row := range rep.Rows {
		if row.Unit == unit && row.Verdict == v {
			return true
		}
	}
	return false
}
