package gatecli

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/docfigures"
	"github.com/vllmperf/vllmperf/internal/gate/render"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// simBaseline is the shipped simulator baseline's path.
func simBaseline(t *testing.T) string {
	t.Helper()
	return filepath.Join(docfigures.ModuleRoot(t), "baselines", "sim.txt")
}

// TestBriefFitsAScreen gates the shipped baseline against itself with the
// default format: it passes, within 100 lines, the verdict first.
func TestBriefFitsAScreen(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	o := &Flags{Baseline: simBaseline(t), New: simBaseline(t)}
	o.Output.Format, o.Output.Formats = "text", render.Formats
	if err := o.Run(&out, &errOut); err != nil {
		t.Fatalf("gate of the baseline against itself: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) > 100 {
		t.Errorf("the brief report has %d lines, want at most 100:\n%s", len(lines), out.String())
	}
	if !strings.HasPrefix(lines[0], "PASS: ") || !strings.HasPrefix(lines[len(lines)-1], "PASS: ") {
		t.Errorf("the verdict is not the first and last line: %q … %q", lines[0], lines[len(lines)-1])
	}
	if !strings.Contains(out.String(), "rows not shown: ") || !strings.Contains(out.String(), "--format full") {
		t.Errorf("the brief report does not count what it leaves out nor point to --format full:\n%s", out.String())
	}
}

// cutSubset writes the lines of src that are not benchmark lines, and the
// benchmark lines that contain sub, to a new file: a run of part of the
// suite on the baseline's setup.
func cutSubset(t *testing.T, src, sub string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if line := sc.Text(); !strings.HasPrefix(line, "Benchmark") || strings.Contains(line, sub) {
			out.WriteString(line + "\n")
		}
	}
	path := filepath.Join(t.TempDir(), "subset.txt")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFilterGatesASubset gates one profile × scenario, cut from the
// shipped baseline, against the whole baseline: refused without --filter,
// passed with it, and the report says how much was left out.
func TestFilterGatesASubset(t *testing.T) {
	t.Parallel()
	subset := cutSubset(t, simBaseline(t), "/profile=basic/scenario=ttft-tpot/")
	for _, tc := range []struct {
		name, filter string
		wantCode     int
		want         string // in stdout or the error
	}{
		{"no filter", "", exitstatus.BadUsage, "not measured on the same setup"},
		{"profile and scenario", "/profile:basic /scenario:ttft-tpot", exitstatus.OK, "--filter '/profile:basic /scenario:ttft-tpot': 1020 baseline and 0 new benchmark lines left out"},
		{"one prompt", "/profile:basic /prompt:short", exitstatus.OK, "new benchmark lines left out"},
		// A query on units leaves a limit on another unit unchecked:
		// undecided, never a silent pass.
		{"a unit", "/profile:basic /scenario:ttft-tpot .unit:ttft-p99-ns", exitstatus.Undecided, "INCONCLUSIVE: 1 limit never checked, 3 unchanged"},
		{"selects nothing", "/profile:nope", exitstatus.BadUsage, "selects no benchmark of"},
		{"bad syntax", "/profile:(basic", exitstatus.BadUsage, "the syntax is benchstat's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut, msg bytes.Buffer
			o := &Flags{Baseline: simBaseline(t), New: subset, Filter: tc.filter}
			o.Output.Format, o.Output.Formats = "text", render.Formats
			err := o.Run(&out, &errOut)
			if code := exitstatus.Code(err, &msg); code != tc.wantCode {
				t.Fatalf("exit %d, want %d: %s\n%s", code, tc.wantCode, msg.String(), out.String())
			}
			if got := out.String() + msg.String(); !strings.Contains(got, tc.want) {
				t.Errorf("want %q in:\n%s", tc.want, got)
			}
		})
	}
}
