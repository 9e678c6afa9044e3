package testphase

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestList(t *testing.T) {
	t.Parallel()
	got, err := List("testdata/ok")
	if err != nil {
		t.Fatal(err)
	}
	want := []Decl{
		{Pkg: ".", Test: "TestContainersAlone", Pos: "root_test.go:27", Phase: PhaseAlone, Lane: LaneContainers},
		{Pkg: ".", Test: "TestPlain", Pos: "root_test.go:14", Phase: PhaseRace},
		{Pkg: ".", Test: "TestServerAlone", Pos: "root_test.go:9", Phase: PhaseAlone, Fault: true, Lane: LaneDefault},
		{Pkg: ".", Test: "TestTimingQuick", Pos: "root_test.go:16", Phase: PhaseTimed},
		{Pkg: "./inner", Test: "TestFaultOnly", Pos: "inner/inner_test.go:9", Phase: PhaseRace, Fault: true},
		{Pkg: "./inner", Test: "TestLongFit", Pos: "inner/inner_test.go:13", Phase: PhaseMeasured},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d tests %v, want %d %v", len(got), got, len(want), want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("test %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestListErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dir  string
		errs []string
	}{
		{"testdata/helper", []string{
			"helper_test.go:10: testphase.Alone is called outside a Test function's own statements",
			"helper_test.go:15: testphase.Timed is called outside",
		}},
		{"testdata/twophases", []string{
			"two_test.go:9: TestBoth declares the alone phase and the timed phase: a test runs in one phase, keep one",
			"two_test.go:14: TestFaultTwice declares testphase.Fault twice",
		}},
		{"testdata/lanes", []string{
			"lanes_test.go:9: TestLaneTwice declares testphase.Lane twice: a test runs in one lane, keep one",
			"lanes_test.go:15: TestLaneNotAlone declares a lane but not testphase.Alone: only the alone phase runs in lanes",
			"lanes_test.go:20: TestLaneLiteral declares a lane make test cannot read: write testphase.Lane(t, testphase.LaneX)",
		}},
		{"testdata/alias", []string{"alias_test.go imports github.com/vllmperf/vllmperf/internal/testphase as tp: import it as testphase"}},
		{"testdata/none", []string{"testdata/none"}},
	} {
		_, err := List(tc.dir)
		if err == nil {
			t.Errorf("%s: no error, want %q", tc.dir, tc.errs)
			continue
		}
		for _, want := range tc.errs {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q, want one containing %q", tc.dir, err, want)
			}
		}
	}
}

func TestSelectAndArgs(t *testing.T) {
	t.Parallel()
	all, err := List("testdata/ok")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kind     string
		patterns []string
		want     string
	}{
		{"alone", nil, `-run '^(TestContainersAlone|TestServerAlone)$' .`},
		{"fault", nil, `-run '^(TestFaultOnly|TestServerAlone)$' . ./inner`},
		{"fault", []string{"./inner"}, `-run '^(TestFaultOnly)$' ./inner`},
		{"fault", []string{"./..."}, `-run '^(TestFaultOnly|TestServerAlone)$' . ./inner`},
		{"fault", []string{"inner/..."}, `-run '^(TestFaultOnly)$' ./inner`},
		{"measured", []string{"."}, ``},
		{"measured", []string{"./inner/"}, `-run '^(TestLongFit)$' ./inner`},
		{"timed", nil, `-run '^(TestTimingQuick)$' .`},
	} {
		sel, err := Select(all, tc.kind, tc.patterns...)
		if err != nil {
			t.Fatal(err)
		}
		args, err := GoTestArgs(all, sel)
		if got := strings.Join(args, " "); err != nil || got != tc.want {
			t.Errorf("%s %v: got %q, %v; want %q", tc.kind, tc.patterns, got, err, tc.want)
		}
	}
	for _, kind := range []string{"race", "", "slow"} {
		if _, err := Select(all, kind); err == nil || !strings.Contains(err.Error(), "want one of measured, timed, alone or fault") {
			t.Errorf("Select(%q): error %v, want the kinds named", kind, err)
		}
	}
}

// TestLanes: the alone phase splits into the lanes its tests declare,
// LaneDefault where they declare none, in Lanes' order.
func TestLanes(t *testing.T) {
	t.Parallel()
	all, err := List("testdata/ok")
	if err != nil {
		t.Fatal(err)
	}
	sel, err := Select(all, "alone")
	if err != nil {
		t.Fatal(err)
	}
	if got := UsedLanes(sel); len(got) != 2 || got[0] != LaneDefault || got[1] != LaneContainers {
		t.Errorf("UsedLanes = %v, want [default containers]", got)
	}
	for _, tc := range []struct {
		lane LaneName
		want string
	}{
		{LaneDefault, `-run '^(TestServerAlone)$' .`},
		{LaneContainers, `-run '^(TestContainersAlone)$' .`},
		{LaneSuite, ``},
	} {
		in, err := InLane(sel, tc.lane)
		if err != nil {
			t.Fatal(err)
		}
		args, err := GoTestArgs(all, in)
		if got := strings.Join(args, " "); err != nil || got != tc.want {
			t.Errorf("lane %s: got %q, %v; want %q", tc.lane, got, err, tc.want)
		}
	}
	if _, err := InLane(sel, "fast"); err == nil || !strings.Contains(err.Error(), `lane "fast": want one of default, containers, suite`) {
		t.Errorf("InLane(fast): error %v, want the lanes named", err)
	}
}

func TestArgsNameCollision(t *testing.T) {
	t.Parallel()
	all, err := List("testdata/collide")
	if err != nil {
		t.Fatal(err)
	}
	sel, err := Select(all, "alone")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := GoTestArgs(all, sel); err == nil || !strings.Contains(err.Error(), "b/b_test.go:9: TestShared of ./b has the name of a test this phase runs in another package") {
		t.Errorf("error %v, want the collision of ./b's TestShared named", err)
	}
	// Narrowed to ./a, ./b is not run, and nothing collides.
	sel, _ = Select(all, "alone", "./a")
	if args, err := GoTestArgs(all, sel); err != nil || strings.Join(args, " ") != `-run '^(TestShared)$' ./a` {
		t.Errorf("./a: got %q, %v", args, err)
	}
}

// declText finds a declaration as text, the way a reader (or grep) would.
var declText = regexp.MustCompile(`\btestphase\.(Measured|Timed|Alone|Fault)\(`)

// TestRepositoryListing guards make test's schedule: the module's tests
// list without error, and every declaration a text search finds in a
// *_test.go file is one the listing found (none hidden in a helper, under
// another import name, or in a file the walk skips). The phases make runs
// are not empty, and none runs an undeclared test of the same name.
func TestRepositoryListing(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	all, err := List(root)
	if err != nil {
		t.Fatalf("make test's listing of the test phases: %v", err)
	}
	listed := map[string]int{}
	per := map[string]int{}
	for _, d := range all {
		file := strings.SplitN(d.Pos, ":", 2)[0]
		if d.Phase != PhaseRace {
			listed[file]++
			per[string(d.Phase)]++
		}
		if d.Fault {
			listed[file]++
			per[KindFault]++
		}
	}
	found := map[string]int{}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || isModule(path)) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := len(declText.FindAll(data, -1)); n > 0 {
			rel, _ := filepath.Rel(root, path)
			found[filepath.ToSlash(rel)] = n
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for file, n := range found {
		if listed[file] != n {
			t.Errorf("%s: %d testphase declarations in the text, %d found by the listing: make test would not run the others in their phase", file, n, listed[file])
		}
	}
	for file := range listed {
		if found[file] == 0 {
			t.Errorf("%s: the listing found declarations the text search does not", file)
		}
	}
	for _, kind := range []string{"measured", "timed", "alone", "fault"} {
		if per[kind] == 0 {
			t.Errorf("no test declares %s: make test's %s phase would run nothing", kind, kind)
		}
		sel, err := Select(all, kind)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := GoTestArgs(all, sel); err != nil {
			t.Errorf("make test's %s phase: %v", kind, err)
		}
	}
}

// moduleRoot returns the folder of the module's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for !isModule(dir) {
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = parent
	}
	return dir
}
