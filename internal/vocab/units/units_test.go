package units_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// docsUnits reads docs/bench-format.md's "## Units" table: every unit
// named in backticks in the first column, with the table's direction.
func docsUnits(t *testing.T) (names []string, better map[string]string) {
	t.Helper()
	b, err := os.ReadFile("../../../docs/bench-format.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n## Units\n")
	if !ok {
		t.Fatal("docs/bench-format.md: no ## Units section")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	better = map[string]string{}
	tick := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 || !strings.Contains(cells[1], "`") {
			continue
		}
		dir := strings.TrimSpace(cells[3])
		if dir == "(not gated)" {
			dir = "none"
		}
		for _, m := range tick.FindAllStringSubmatch(cells[1], -1) {
			names = append(names, m[1])
			better[m[1]] = dir
		}
	}
	return names, better
}

// TestDocsTable: the docs list every unit of the package, in its order,
// with its direction, and no other.
func TestDocsTable(t *testing.T) {
	names, better := docsUnits(t)
	if got, want := names, units.Names(); !slices.Equal(got, want) {
		t.Errorf("docs/bench-format.md's units\n got %q\nwant %q (package units)", got, want)
	}
	for _, u := range units.All() {
		if got, want := better[u.Name], u.Better.String(); got != want {
			t.Errorf("%s: docs say better %q, package units %q", u.Name, got, want)
		}
	}
}

func TestDefaultDirection(t *testing.T) {
	for _, c := range []struct {
		unit string
		want units.Direction
	}{
		{units.TTFTP99, units.Lower},            // declared
		{units.TokPerSec, units.Higher},         // declared
		{units.KVPeakPct, units.None},           // declared, not gated
		{"short-" + units.TTFTP99, units.Lower}, // a class's latency: by its kind
		{units.NsPerOp, units.Lower},            // benchfmt's own
		{"bogus", units.None},                   // unknown: shown, not gated
	} {
		if got := units.DefaultDirection(c.unit); got != c.want {
			t.Errorf("DefaultDirection(%q) = %v, want %v", c.unit, got, c.want)
		}
	}
}

func TestUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, u := range units.All() {
		if seen[u.Name] || u.Label == "" {
			t.Errorf("%s: declared twice or without a label", u.Name)
		}
		seen[u.Name] = true
	}
}

func TestLabel(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{units.TTFTP99, "TTFT p99"},                  // declared
		{"short-" + units.TTFTP99, "short TTFT p99"}, // a class's figure
		{"bogus-unit", "bogus-unit"},                 // unknown: its name
	} {
		if got := units.Label(c.name); got != c.want {
			t.Errorf("Label(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestHeadline: the units the gate judges.
func TestHeadline(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		want bool
	}{
		{units.TPOTP50, true},             // a headline unit
		{units.TokPerSec, true},           // a headline unit, higher is better
		{units.TTFTP99, false},            // the suite's, reported only
		{"short-" + units.TTFTP50, false}, // a class's form of a headline unit: reported
		{units.NsPerOp, false},            // benchfmt's own: never judged
		{"my-latency-ns", true},           // a user's own unit: nothing says it is less
	} {
		if got := units.Headline(tc.name); got != tc.want {
			t.Errorf("Headline(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}
