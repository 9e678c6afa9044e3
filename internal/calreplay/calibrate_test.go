package calreplay

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/testphase"
	"github.com/vllmperf/vllmperf/internal/vllmsim/calibration"
)

// update makes TestCalibration rewrite the table in docs/calibration.md.
var update = flag.Bool("update", false, "rewrite the generated part of docs/calibration.md")

// The markers around docs/calibration.md's generated part.
const (
	docsPath   = "../../docs/calibration.md"
	beginTable = "<!-- make calibrate: begin -->"
	endTable   = "<!-- make calibrate: end -->"
)

// calibrate replays every replayable row with the shipped presets.
func calibrate(t *testing.T) []Line {
	t.Helper()
	rows, err := calibration.Load()
	if err != nil {
		t.Fatal(err)
	}
	misses, err := Misses()
	if err != nil {
		t.Fatal(err)
	}
	loso, err := ReadLOSO()
	if err != nil {
		t.Fatal(err)
	}
	if stale := loso.StaleFolds(rows); len(stale) > 0 {
		t.Errorf("loso.yaml does not match the calibration data or presets/presets.go (run make fit):\n  %s", strings.Join(stale, "\n  "))
	}
	return Run(rows, Options{}, Notes(misses), &loso)
}

// TestCalibration prints the calibration table (make calibrate) and, with
// -update, writes it into docs/calibration.md between its markers; without
// -update it fails when the document no longer matches. It also replays
// one HTTP row per model preset (in real time, so their figures move from
// run to run: written with -update into their own section, which the check
// without -update leaves alone) and fails when a request of an HTTP row
// fails or counts its prompt other than one token per word, when an HTTP
// row runs faster than its token path beyond tolerance (HTTPLine.Faster:
// a busy host only ever slows it), or when a figure of an HTTP row is
// outside tolerance of its token path's while the host kept real time
// (HTTPLine.Host); a row the host slowed beyond engine.BehindThreshold is
// reported by name instead of counted as the model's.
func TestCalibration(t *testing.T) {
	testphase.Measured(t)
	lines := calibrate(t)
	for _, l := range lines {
		if l.Err != nil {
			t.Errorf("%s: %v", l.Result.Row.ID, l.Err)
		}
	}
	rows, err := calibration.Load()
	if err != nil {
		t.Fatal(err)
	}
	http := RunHTTP(rows, 0)
	for _, l := range http {
		if l.Err != nil {
			t.Errorf("%s: %v", l.Row.ID(), l.Err)
		}
		for _, c := range l.Faster() {
			t.Errorf("%s: %s %s through HTTP %.4g, token path %.4g: %+.1f%%, faster than the timing model beyond the %.0f%% tolerance",
				l.Row.ID(), c.Metric, c.Stat, c.Simulated, c.Published, 100*c.Error(), 100*c.Tolerance)
		}
		if l.Err != nil || l.Within() {
			continue
		}
		for _, c := range l.Comparisons {
			if c.Within() {
				continue
			}
			if l.Host.Behind() {
				t.Logf("%s: %s %s through HTTP %.4g, token path %.4g (%+.1f%%): not counted, %v",
					l.Row.ID(), c.Metric, c.Stat, c.Simulated, c.Published, 100*c.Error(), l.Host)
				continue
			}
			t.Errorf("%s: %s %s through HTTP %.4g, token path %.4g: %+.1f%%, beyond the %.0f%% tolerance while the host kept real time (%v)",
				l.Row.ID(), c.Metric, c.Stat, c.Simulated, c.Published, 100*c.Error(), 100*c.Tolerance, l.Host)
		}
	}
	loso, err := ReadLOSO()
	if err != nil {
		t.Fatal(err)
	}
	out := Table(lines) + "\n" + Summary(lines) + "\n" + ErrorSummary(lines) + "\n" + SelectionSummary(loso) + "\nMisses and the mechanism the model lacks:\n\n" + MissList(lines) +
		"\nSpread (P99 ÷ median) where the source publishes both, with the default noise:\n\n" + SpreadTable(lines)
	httpOut := "\nThe HTTP path, one row per model preset: token ids in simulated time → the suite's prompts through the HTTP API in real time:\n\n" + HTTPTable(http)
	fmt.Print(out + httpOut)
	doc, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(beginTable)), bytes.Index(doc, []byte(endTable))
	if i < 0 || j < i {
		t.Fatalf("%s: no %q ... %q markers to write the table between", filepath.Clean(docsPath), beginTable, endTable)
	}
	if !*update {
		if got := string(doc[i+len(beginTable) : j]); got != "\n"+out {
			t.Errorf("%s no longer matches what make calibrate prints: run make calibrate", filepath.Clean(docsPath))
		}
		return
	}
	doc = replaceBetween(t, replaceBetween(t, doc, beginTable, endTable, "\n"+out), beginHTTP, endHTTP, "\n"+httpOut)
	if err := os.WriteFile(docsPath, doc, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The markers of the HTTP rows' section of docs/calibration.md: real-time
// figures, rewritten by make calibrate and not compared.
const (
	beginHTTP = "<!-- calibration-http-begin -->"
	endHTTP   = "<!-- calibration-http-end -->"
)

// replaceBetween puts text between doc's begin and end markers.
func replaceBetween(t *testing.T, doc []byte, begin, end, text string) []byte {
	t.Helper()
	i, j := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s: no %q ... %q markers to write between", filepath.Clean(docsPath), begin, end)
	}
	var b bytes.Buffer
	b.Write(doc[:i+len(begin)])
	b.WriteString(text)
	b.Write(doc[j:])
	return b.Bytes()
}

// TestFitRowsWithinTolerance guards the calibration: every figure of every
// fit row stays within its tolerance, except the misses documented in
// misses.yaml, which may not grow beyond their bound. A documented miss
// that has come within tolerance fails too, so that the list stays true.
func TestFitRowsWithinTolerance(t *testing.T) {
	testphase.Measured(t)
	misses, err := Misses()
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]Miss{}
	for _, m := range misses {
		known[m.Row+"/"+string(m.Metric)] = m
	}
	replayed := map[string]bool{}
	for _, l := range calibrate(t) {
		id := l.Result.Row.ID
		replayed[id] = true
		if l.Err != nil {
			t.Errorf("%s: %v", id, l.Err)
			continue
		}
		for _, c := range l.Comparisons {
			m, documented := known[id+"/"+string(c.Metric)]
			e := math.Abs(c.Error())
			switch {
			case documented && c.Within():
				t.Errorf("%s %s is within tolerance now (%+.1f%%): delete its entry from misses.yaml", id, c.Metric, 100*c.Error())
			case l.Result.Row.Split != calibration.Fit:
			case !documented && !c.Within():
				t.Errorf("fit row %s: %s %s published %.4g, simulated %.4g: error %+.1f%% beyond the %.0f%% tolerance",
					id, c.Metric, c.Stat, c.Published, c.Simulated, 100*c.Error(), 100*c.Tolerance)
			case documented && e > m.Bound:
				t.Errorf("fit row %s: documented miss %s grew to %+.1f%% (bound %.0f%%)", id, c.Metric, 100*c.Error(), 100*m.Bound)
			}
		}
	}
	for _, m := range misses {
		if !replayed[m.Row] {
			t.Errorf("misses.yaml: %s is no replayed row", m.Row)
		}
	}
}
