package steadynoise

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// TestUnitsJudged: every unit compared is one the gate judges.
func TestUnitsJudged(t *testing.T) {
	t.Parallel()
	for _, u := range Units {
		if !units.Headline(u) && !units.IsTail(u) {
			t.Errorf("%s: not judged by the gate (units.Headline, units.Tails)", u)
		}
	}
}

func TestRatio(t *testing.T) {
	t.Parallel()
	inf := math.Inf(1)
	for _, tc := range []struct {
		steady, whole, want float64
	}{
		{0.02, 0.04, 0.5},
		{0.05, 0.04, 1.25},
		{0, 0, 1},        // both see every change: a tie
		{0.01, 0, inf},   // only the whole run's sees every change
		{inf, 0.03, inf}, // the steady file sees none
		{inf, inf, 1},
	} {
		if got := ratio(tc.steady, tc.whole); got != tc.want {
			t.Errorf("ratio(%v, %v) = %v, want %v", tc.steady, tc.whole, got, tc.want)
		}
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		ratios  []float64
		smaller int
		median  float64
		wins    bool
	}{
		{"every cell better", []float64{0.5, 0.6, 0.7, 0.8, 0.9, 0.95}, 6, 0.75, true},
		{"two thirds exactly", []float64{0.5, 0.6, 1.1}, 2, 0.6, true},
		{"under two thirds", []float64{0.5, 0.6, 1.0, 1.1}, 2, 0.8, false}, // needs 3 of 4; 1.0 is not smaller
		{"median above 0.90", []float64{0.95, 0.95, 0.95}, 3, 0.95, false},
		{"median 0.90 exactly", []float64{0.8, 0.9, 1.0}, 2, 0.9, true},
		{"one cell worse by over 25%", []float64{0.5, 0.5, 0.5, 1.26}, 3, 0.5, false},
		{"one cell worse by 25% exactly", []float64{0.5, 0.5, 0.5, 1.25}, 3, 0.5, true},
		{"an infinite ratio", []float64{0.5, 0.5, math.Inf(1)}, 2, 0.5, false},
		{"no cell", nil, 0, math.NaN(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Decide(tc.ratios)
			if v.Smaller != tc.smaller || v.Wins != tc.wins || !(v.Median == tc.median || math.IsNaN(v.Median) && math.IsNaN(tc.median)) {
				t.Errorf("Decide(%v) = %+v; want %d smaller, median %v, wins %v", tc.ratios, v, tc.smaller, tc.median, tc.wins)
			}
		})
	}
	if Adopt([]Verdict{{Wins: true}, {Wins: false}}) || !Adopt([]Verdict{{Wins: true}, {Wins: true}}) || Adopt(nil) {
		t.Error("Adopt: want true only when every size wins")
	}
}

// TestWrite: the fixture folder's two points (a sweep point with a steady
// window, one run of it without tpot-p99; a ramp without one) become the
// same lines in both files, the steady file taking the window's figures
// and the whole run's where it has none, saying so; the units not judged
// and the knee's line are left out. ReadSize reads them back.
func TestWrite(t *testing.T) {
	t.Parallel()
	f, err := results.ReadFolder(filepath.Join("testdata", "folder"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := Write(f)
	if err != nil {
		t.Fatal(err)
	}
	if files.Runs != 6 || files.Fallbacks != 4 {
		t.Errorf("%d runs, %d fallbacks; want 6 and 4 (three ramp runs, one run without tpot-p99)", files.Runs, files.Fallbacks)
	}
	for _, bad := range []string{"req/s", "kv-peak-%", "knee"} {
		if bytes.Contains(files.Whole, []byte(" "+bad)) || bytes.Contains(files.Steady, []byte(" "+bad)) {
			t.Errorf("%q written; want only %v", bad, Units)
		}
	}
	steady := string(files.Steady)
	for _, want := range []string{
		"window: steady\n\nBenchmarkPerf/profile=basic/scenario=sweep/conc=4 1 2.1e+07 ttft-p50-ns",
		"window: whole run: a ramp-up changes its rate throughout; see its rate windows\n\nBenchmarkPerf/profile=basic/scenario=ramp/ramp=linear 1 3e+07 ttft-p50-ns",
		"window: whole run for tpot-p99-ns: the steady window has none\n",
		"size: quick\n",
	} {
		if !strings.Contains(steady, want) {
			t.Errorf("steady file lacks %q:\n%s", want, steady)
		}
	}
	dir := t.TempDir()
	wp, sp := filepath.Join(dir, "whole.txt"), filepath.Join(dir, "steady.txt")
	if err := os.WriteFile(wp, files.Whole, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sp, files.Steady, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSize("quick", wp, sp)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Cells) != len(Units) || s.Runs != 6 || len(s.Fallbacks) != 2 || s.Fallbacks[0].Runs != 3 || s.Fallbacks[1].Runs != 1 {
		t.Errorf("%d cells, %d runs, fallbacks %+v; want %d cells, 6 runs, the ramp's 3 and the sweep point's 1 (file order)", len(s.Cells), s.Runs, s.Fallbacks, len(Units))
	}
	table := Table([]*Size{s})
	for _, want := range []string{"steady window unavailable: 4 of 6 runs", "| basic | tpot-p50-ns |", "`profile=basic/scenario=ramp/ramp=linear`: 3 runs (a ramp-up", "**Verdict:"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

// TestWriteRefuses: a folder recorded before the suite stored the steady
// window's figures, and one without the judged units, are refused with
// the fix.
func TestWriteRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		runs []results.Run
		want string
	}{
		{"no steady_metrics", []results.Run{{Name: "profile=basic/scenario=x/conc=1", Metrics: map[string]float64{units.TPOTP50: 1}}}, "record a new folder"},
		{"no judged unit", []results.Run{{Name: "profile=basic/scenario=x/knee", Metrics: map[string]float64{units.Knee: 8}, SteadyMetrics: map[string]float64{}}}, "not a suite's results folder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Write(&results.Folder{Dir: "DIR", Summary: &results.Summary{Runs: tc.runs}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Write: %v; want an error with %q", err, tc.want)
			}
		})
	}
}

// TestReadSizeRefuses: a steady file that Write did not make is refused.
func TestReadSizeRefuses(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "x.txt")
	if err := os.WriteFile(p, []byte("BenchmarkPerf/profile=basic/scenario=x/conc=1 1 5 tpot-p50-ns\nBenchmarkPerf/profile=basic/scenario=x/conc=1 1 6 tpot-p50-ns\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSize("quick", p, p); err == nil || !strings.Contains(err.Error(), WindowKey) {
		t.Errorf("ReadSize: %v; want an error naming %q", err, WindowKey)
	}
}
