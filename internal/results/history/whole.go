package history

import (
	"bytes"
	"strings"

	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/results"
)

// checkWhole refuses a bench file that is not whole before it is stored:
// one that does not end in a line end (cut mid-line: its last value or
// unit may be cut too, "goo" for "goodput-req/s"); go test output whose
// closing line (PASS, FAIL, ok) is not its last (cut at a line end after
// it began); and, when the run's summary.json is there (sumDir), one with
// fewer result lines of a benchmark than the runs the summary lists. A
// run the summary lists with no line in the file at all is a test's
// (TestPerf* writes the folder too, and prints no benchmark line), so
// only benchmarks the file holds are counted.
func checkWhole(data []byte, in *input.Input, benchPath, sumDir string) error {
	if len(data) > 0 && data[len(data)-1] != '\n' {
		last := data[bytes.LastIndexByte(data, '\n')+1:]
		return badInput("%s ends inside a line (%d bytes without a line end): the file is cut short; copy it again whole", benchPath, len(last))
	}
	if last, ok := unclosed(data); ok {
		return badInput("%s is go test output whose last line is %q, not its closing PASS, FAIL or ok line: the file is cut short; copy it again whole", benchPath, last)
	}
	if sumDir == "" {
		return nil
	}
	sum, err := results.Read(sumDir)
	if err != nil {
		return badInput("%v", err)
	}
	listed := map[string]int{}
	var names []string
	for _, r := range sum.Runs {
		if listed[r.Name] == 0 {
			names = append(names, r.Name)
		}
		listed[r.Name]++
	}
	for _, name := range names {
		if got, failed := resultCount(in, name); !failed && got > 0 && got < listed[name] {
			return badInput("%s holds %d result line(s) of %s where %s/%s lists %d runs: the file is cut short; copy the results folder again whole",
				benchPath, got, name, sumDir, results.SummaryFile, listed[name])
		}
	}
	return nil
}

// resultCount counts in's result lines of the run named name
// (results.Run.Name: no "Perf/", no GOMAXPROCS suffix), and reports
// whether a run of it failed (its block prints no result line, and
// holds a line per check, so it cannot be counted).
func resultCount(in *input.Input, name string) (n int, failed bool) {
	for _, r := range in.Results {
		if sameRun(string(r.Name.Full()), name) {
			n++
		}
	}
	for _, c := range in.RunChecks {
		if sameRun(c.Benchmark, name) {
			return n, true
		}
	}
	return n, false
}

// sameRun reports whether the full benchmark name full ("Perf/…-2") is
// the run name.
func sameRun(full, name string) bool {
	rest, ok := strings.CutPrefix(strings.TrimPrefix(full, "Perf/"), name)
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	digits := strings.TrimPrefix(rest, "-")
	return len(digits) < len(rest) && digits != "" && strings.Trim(digits, "0123456789") == ""
}

// unclosed reports whether data is go test output (it holds a closing
// line: PASS, FAIL, "ok  <package>" or "FAIL <package>") whose last
// non-blank line is not one, and that line.
func unclosed(data []byte) (last string, cut bool) {
	lines := strings.Split(strings.TrimRight(string(data), "\n\r\t "), "\n")
	closed := false
	for _, l := range lines {
		closed = closed || closing(l)
	}
	last = lines[len(lines)-1]
	return last, closed && !closing(last)
}

// go test's own closing lines (cmd/go, testing): the test binary's
// verdict, then the package line. These are go test's words, which the
// history parses; they are not vllmperf's verdicts (package verdict) and
// must not follow them if those ever change.
const (
	goTestPass       = "PASS"   // the binary's line when every test passed
	goTestFail       = "FAIL"   // the binary's line when one failed
	goTestPackageOK  = "ok  \t" // "ok  \t<package>\t<time>"
	goTestPackageBad = "FAIL\t" // "FAIL\t<package>\t<time>"
)

// closing reports whether line is one of go test's closing lines.
func closing(line string) bool {
	line = strings.TrimRight(line, "\r")
	return line == goTestPass || line == goTestFail || strings.HasPrefix(line, goTestPackageOK) || strings.HasPrefix(line, goTestPackageBad)
}
