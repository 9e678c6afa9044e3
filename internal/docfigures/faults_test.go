package docfigures

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/testphase"
)

// The fault matrix's leaf test cases (docs/reliability.md, "Counts"):
// make fault-cases runs the fault tests (those that declare
// testphase.Fault) with go test -json and, through
// TestFiguresFaults with envFaultJSON set, writes faultCases; without it
// the test recomputes the counts from faultCases and checks the figure.
const (
	envFaultJSON = "VLLMPERF_FAULT_JSON"
	faultCases   = "docs/figures/fault-cases.txt"
	modulePath   = "github.com/vllmperf/vllmperf"
)

// testEvent is one line of go test -json.
type testEvent struct {
	Action, Package, Test, Output string
}

// leafCase is one leaf test case and how it ended.
type leafCase struct{ pkg, test, action string }

// TestFiguresFaults checks docs/reliability.md's fault counts against the
// committed list of leaf cases, and that the list's tests are exactly those
// that declare testphase.Fault: a new fault test, or one renamed, removed
// or no longer declared, fails here until make fault-cases counts it.
func TestFiguresFaults(t *testing.T) {
	t.Parallel()
	root := ModuleRoot(t)
	if src := os.Getenv(envFaultJSON); src != "" {
		writeFaultCases(t, src, filepath.Join(root, faultCases))
	}
	cases, panics := readFaultCases(t, filepath.Join(root, faultCases))
	declared := faultDeclarations(t, root)
	for _, top := range topLevel(cases) {
		if !declared[top] {
			t.Errorf("%s lists %s of %s, which does not exist or does not declare testphase.Fault: run make fault-cases", faultCases, top.test, top.pkg)
		}
		delete(declared, top)
	}
	for top := range declared {
		t.Errorf("%s of %s declares testphase.Fault and has no case in %s: run make fault-cases", top.test, top.pkg, faultCases)
	}
	Sync(t, "docs/reliability.md", "fault-counts", faultFigure(cases, panics))
}

// faultDeclarations returns the tests that declare testphase.Fault, as
// topLevel names them (the package "." or without "./").
func faultDeclarations(t *testing.T, root string) map[leafCase]bool {
	t.Helper()
	all, err := testphase.List(root)
	if err != nil {
		t.Fatal(err)
	}
	faults, err := testphase.Select(all, testphase.KindFault)
	if err != nil {
		t.Fatal(err)
	}
	out := map[leafCase]bool{}
	for _, d := range faults {
		pkg := d.Pkg
		if pkg != "." {
			pkg = strings.TrimPrefix(pkg, "./")
		}
		out[leafCase{pkg: pkg, test: d.Test}] = true
	}
	return out
}

// writeFaultCases reads go test -json output from src and writes the leaf
// cases (tests without subtests, and the subtests that end) to dst, one
// "package test action" a line, and the panics seen.
func writeFaultCases(t *testing.T, src, dst string) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ended := map[[2]string]string{}
	panics := 0
	dec := json.NewDecoder(bufio.NewReader(f))
	for {
		var e testEvent
		if err := dec.Decode(&e); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if strings.HasPrefix(e.Output, "panic:") {
			panics++
		}
		if e.Test != "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip") {
			ended[[2]string{strings.TrimPrefix(strings.TrimPrefix(e.Package, modulePath), "/"), e.Test}] = e.Action
		}
	}
	var lines []string
	for k, action := range ended {
		if hasSubtests(ended, k) {
			continue
		}
		pkg := k[0]
		if pkg == "" {
			pkg = "."
		}
		lines = append(lines, pkg+" "+k[1]+" "+action)
	}
	slices.Sort(lines)
	out := fmt.Sprintf("# leaf test cases of the fault matrix (make fault-cases); panics: %d\n%s\n", panics, strings.Join(lines, "\n"))
	if err := os.WriteFile(dst, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}

func hasSubtests(ended map[[2]string]string, k [2]string) bool {
	for o := range ended {
		if o[0] == k[0] && strings.HasPrefix(o[1], k[1]+"/") {
			return true
		}
	}
	return false
}

var panicsLine = regexp.MustCompile(`panics: (\d+)`)

func readFaultCases(t *testing.T, file string) ([]leafCase, int) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v: run make fault-cases", err)
	}
	var cases []leafCase
	panics := -1
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.HasPrefix(line, "#") {
			if m := panicsLine.FindStringSubmatch(line); m != nil {
				fmt.Sscan(m[1], &panics)
			}
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("%s:%d: want \"package test action\", got %q", file, i+1, line)
		}
		cases = append(cases, leafCase{f[0], f[1], f[2]})
	}
	if panics < 0 || len(cases) == 0 {
		t.Fatalf("%s: no header with the panics, or no case: run make fault-cases", file)
	}
	return cases, panics
}

// topLevel returns each top-level test of the cases once.
func topLevel(cases []leafCase) []leafCase {
	seen := map[leafCase]bool{}
	var out []leafCase
	for _, c := range cases {
		top := leafCase{pkg: c.pkg, test: strings.SplitN(c.test, "/", 2)[0]}
		if !seen[top] {
			seen[top] = true
			out = append(out, top)
		}
	}
	return out
}

// faultFigure is the "Faults tried" cell: the total, per package (most
// first), and how they ended.
func faultFigure(cases []leafCase, panics int) string {
	per := map[string]int{}
	ended := map[string]int{}
	for _, c := range cases {
		per[c.pkg]++
		ended[c.action]++
	}
	pkgs := make([]string, 0, len(per))
	for p := range per {
		pkgs = append(pkgs, p)
	}
	slices.SortFunc(pkgs, func(a, b string) int {
		if per[a] != per[b] {
			return per[b] - per[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(pkgs))
	for i, p := range pkgs {
		name := strings.TrimPrefix(p, "internal/")
		if p == "." {
			name = "root"
		}
		parts[i] = fmt.Sprintf("%d `%s`", per[p], name)
	}
	return fmt.Sprintf("%d: %s. %d pass, %d fail, %d skipped; %d panics", len(cases), strings.Join(parts, ", "), ended["pass"], ended["fail"], ended["skip"], panics)
}
