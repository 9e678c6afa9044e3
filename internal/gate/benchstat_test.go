package gate

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate/gatemath"

	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchunit"
)

// benchstatCell is one row of one of benchstat's -format csv tables.
type benchstatCell struct {
	baseCenter, newCenter float64
	baseCI, newCI         string // "3%", "∞"
	delta                 string // "~" or "+1.23%"
	pn                    string // "p=0.579 n=10"
}

// runBenchstat runs the benchstat command (a tool dependency in go.mod:
// `go tool benchstat`, built from the module cache) with its default
// settings and CSV output, and returns its cells by benchmark name
// (GOMAXPROCS suffix dropped) and unit (benchstat's tidied unit).
func runBenchstat(t *testing.T, base, next string) map[[2]string]benchstatCell {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the go command is needed to run benchstat: %v", err)
		}
		t.Skipf("no go command to run benchstat with: %v", err)
	}
	cmd := exec.Command(goCmd, "tool", "benchstat", "-format", "csv", base, next)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go tool benchstat: %v\n%s", err, stderr.String())
	}
	r := csv.NewReader(&stdout)
	r.FieldsPerRecord = -1
	records, err := r.ReadAll()
	if err != nil {
		t.Fatalf("benchstat's CSV: %v", err)
	}
	gomaxprocs := regexp.MustCompile(`-\d+$`)
	cells := map[[2]string]benchstatCell{}
	unit := ""
	for _, rec := range records {
		switch {
		case len(rec) == 7 && rec[2] == "CI" && rec[5] == "vs base":
			unit = rec[1]
		case len(rec) < 7 || unit == "" || rec[0] == "" || rec[0] == "geomean":
			// file names, config headers, blank lines, geomeans
		default:
			c := benchstatCell{baseCI: rec[2], newCI: rec[4], delta: rec[5], pn: rec[6]}
			c.baseCenter = parseFloat(t, rec[1])
			c.newCenter = parseFloat(t, rec[3])
			cells[[2]string{gomaxprocs.ReplaceAllString(rec[0], ""), unit}] = c
		}
	}
	if len(cells) == 0 {
		t.Fatalf("no table in benchstat's output:\n%s", stdout.String())
	}
	return cells
}

func parseFloat(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("benchstat printed %q: %v", s, err)
	}
	return v
}

// TestSameNumbersAsBenchstat runs the benchstat command on the fixture
// pairs and checks that the gate's medians, intervals and p-values (and
// so benchstat's "~" or delta) are the ones benchstat prints, for every
// benchmark and unit.
func TestSameNumbersAsBenchstat(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]string{
		{"base.txt", "noise.txt"},
		{"base.txt", "regression.txt"},
		{"base.txt", "improvement.txt"},
		{"base.txt", "throughput-drop.txt"},
		{"base.txt", "errors.txt"},
		{"base-3.txt", "new-3.txt"},
	} {
		t.Run(pair[1], func(t *testing.T) {
			t.Parallel()
			basePath, newPath := filepath.Join("testdata", "bench", pair[0]), filepath.Join("testdata", "bench", pair[1])
			cells := runBenchstat(t, basePath, newPath)
			rep, err := Compare(readBench(t, pair[0]), readBench(t, pair[1]), loadThresholds(t, "thresholds.yaml"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			seen := 0
			for _, row := range rep.Rows {
				_, tidy := benchunit.Tidy(1, row.Unit)
				cell, ok := cells[[2]string{row.Name, tidy}]
				if !ok {
					t.Errorf("%s %s (%s): not in benchstat's output", row.Name, row.Unit, tidy)
					continue
				}
				seen++
				if err := sameAsBenchstat(row, cell); err != nil {
					t.Errorf("%s %s: %v", row.Name, row.Unit, err)
				}
			}
			if seen != len(cells) {
				t.Errorf("the gate has %d of benchstat's %d rows", seen, len(cells))
			}
		})
	}
}

// sameAsBenchstat compares a row with benchstat's cell: p exactly, the
// intervals and delta as benchstat formats them, and the medians after
// benchstat's unit conversion. benchstat converts each run's -ns value to
// seconds before it averages the middle two of an even count, the gate
// averages nanoseconds (the file's unit, the one thresholds.yaml limits),
// so a median may differ in its last bit: within one ulp is equal.
func sameAsBenchstat(row Row, cell benchstatCell) error {
	b, n := row.Baseline, row.New
	for _, side := range []struct {
		name   string
		gate   float64
		stat   float64
		gateCI string
		statCI string
	}{
		{"baseline median", tidyValue(row.Unit, b.Median), cell.baseCenter, ciString(b), cell.baseCI},
		{"new median", tidyValue(row.Unit, n.Median), cell.newCenter, ciString(n), cell.newCI},
	} {
		if !withinOneULP(side.gate, side.stat) {
			return fmt.Errorf("%s: gate %v, benchstat %v", side.name, side.gate, side.stat)
		}
		if side.gateCI != side.statCI {
			return fmt.Errorf("%s interval: gate ±%s, benchstat ±%s", side.name, side.gateCI, side.statCI)
		}
	}
	cmp := benchmath.Comparison{P: row.P, N1: b.N, N2: n.N, Alpha: benchmath.DefaultThresholds.CompareAlpha}
	if got := cmp.String(); got != cell.pn {
		return fmt.Errorf("p: gate %q (p=%v), benchstat %q", got, row.P, cell.pn)
	}
	if got := cmp.FormatDelta(b.Median, n.Median); got != cell.delta {
		return fmt.Errorf("delta: gate %q, benchstat %q", got, cell.delta)
	}
	return nil
}

func tidyValue(unit string, v float64) float64 {
	tv, _ := benchunit.Tidy(v, unit)
	return tv
}

func ciString(s *gatemath.Summary) string {
	return benchmath.Summary{Center: s.Median, Lo: s.Lo, Hi: s.Hi}.PctRangeString()
}

// withinOneULP: a and b are equal or adjacent float64 values.
func withinOneULP(a, b float64) bool {
	return a == b || math.Nextafter(a, b) == b
}
