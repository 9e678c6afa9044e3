package input

import (
	"bufio"
	"bytes"
	"regexp"
	"strings"

	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// StatusInvalid is check.Invalid as the bench output writes it (package
// check's tests tie the two).
const StatusInvalid = string(verdict.Invalid)

// checkPrefix starts every line CheckLine writes.
const checkPrefix = verdict.LinePrefix

// CheckLine is the line a benchmark logs (b.Errorf) for a check that fails
// it: "check: STATUS NAME: DETAIL". The gate reads it back from the
// `--- FAIL:` blocks of the bench output.
func CheckLine(status, name, detail string) string {
	return verdict.Check{Status: verdict.Status(status), Name: name, Detail: detail}.Line()
}

// RunCheck is one failed check read from the bench output.
type RunCheck struct {
	// Benchmark is the full name without "Benchmark": Perf/profile=.../...
	Benchmark string
	// Status is package check's (FAIL, INVALID, NOT_AVAILABLE, ...).
	Status, Name, Detail string
}

// failHeader is go test's line before a failed benchmark's log.
var failHeader = regexp.MustCompile(`^\s*--- FAIL: Benchmark(\S+)`)

// logLine is one log line under it: "    perf_test.go:12: message".
var logLine = regexp.MustCompile(`^\s+\S+\.go:\d+: (.*)$`)

// readRunChecks returns the failed checks logged in the `--- FAIL:`
// blocks of a bench output, in order; the same check of the same
// benchmark once per failed run.
func readRunChecks(data []byte) []RunCheck {
	var out []RunCheck
	bench := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if m := failHeader.FindStringSubmatch(line); m != nil {
			// A later repetition's block names the benchmark with go
			// test's -N GOMAXPROCS suffix, the first's without.
			bench = procsSuffix.ReplaceAllString(m[1], "")
			continue
		}
		if bench == "" {
			continue
		}
		m := logLine.FindStringSubmatch(line)
		if m == nil {
			if !strings.HasPrefix(line, "    ") { // a continuation line stays in the block
				bench = ""
			}
			continue
		}
		if rc, ok := parseCheckLine(bench, m[1]); ok {
			out = append(out, rc)
		}
	}
	return out
}

// parseCheckLine reads CheckLine's format.
func parseCheckLine(bench, msg string) (RunCheck, bool) {
	rest, ok := strings.CutPrefix(msg, checkPrefix)
	if !ok {
		return RunCheck{}, false
	}
	status, rest, ok := strings.Cut(rest, " ")
	if !ok {
		return RunCheck{}, false
	}
	name, detail, ok := strings.Cut(rest, ": ")
	if !ok {
		return RunCheck{}, false
	}
	return RunCheck{Benchmark: bench, Status: status, Name: name, Detail: detail}, true
}
