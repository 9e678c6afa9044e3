package testphase

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ImportPath is this package's import path, as test files import it.
const ImportPath = "github.com/vllmperf/vllmperf/internal/testphase"

// KindFault selects, in Select, the tests that declare Fault.
const KindFault = "fault"

// Decl is the declarations of one Test function.
type Decl struct {
	// Pkg is the package's directory as go test takes it: "." for the
	// module root, "./internal/x" otherwise.
	Pkg string
	// Test is the Test function's name.
	Test string
	// Pos is file:line of the Test function, the file relative to the root.
	Pos string
	// Phase is the phase it declares: PhaseRace when it declares none.
	Phase Phase
	// Fault is whether it declares itself a fault-matrix case.
	Fault bool
	// Lane is its lane of the alone phase: LaneDefault for an alone test
	// that declares none, "" for a test of another phase.
	Lane LaneName
}

// declFuncs maps the declaring functions' names to the phase each declares
// ("" for Fault).
var declFuncs = map[string]Phase{"Measured": PhaseMeasured, "Timed": PhaseTimed, "Alone": PhaseAlone, "Fault": "", "Lane": ""}

// laneConsts maps the Lane constants' names, as a declaration writes them
// (testphase.LaneContainers), to their lanes.
var laneConsts = map[string]LaneName{"LaneDefault": LaneDefault, "LaneContainers": LaneContainers, "LaneSuite": LaneSuite}

// List reads every *_test.go file of the module at root (not testdata,
// vendor, hidden folders, nor nested modules) and returns each Test
// function with its declarations (PhaseRace and no Fault where it declares
// none), by package and name. A
// declaration anywhere else than a statement of a Test function's own body
// (a helper, a closure, a subtest, a non-test function), a test that
// declares two phases or one twice, and an import of this package under
// another name are errors: make would not see them, or not as the test
// runs.
func List(root string) ([]Decl, error) {
	var decls []Decl
	var errs []error
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || isModule(path)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		fd, ferrs, err := listFile(path, filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		decls = append(decls, fd...)
		errs = append(errs, ferrs...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortFunc(decls, func(a, b Decl) int {
		if c := strings.Compare(a.Pkg, b.Pkg); c != 0 {
			return c
		}
		return strings.Compare(a.Test, b.Test)
	})
	return decls, nil
}

func isModule(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "go.mod"))
	return err == nil
}

// listFile returns the declarations of one test file (rel, relative to
// the module root, names it in the results and errors).
func listFile(path, rel string) ([]Decl, []error, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, nil, err
	}
	name, errs := importName(f, rel)
	pkg := "./" + filepath.ToSlash(filepath.Dir(rel))
	if pkg == "./." {
		pkg = "."
	}
	var decls []Decl
	seen := map[*ast.CallExpr]bool{}
	for _, fn := range f.Decls {
		fn, ok := fn.(*ast.FuncDecl)
		if !ok || fn.Body == nil || !isTest(fn) {
			continue
		}
		d := Decl{Pkg: pkg, Test: fn.Name.Name, Pos: fmt.Sprintf("%s:%d", rel, fset.Position(fn.Pos()).Line), Phase: PhaseRace}
		for _, st := range fn.Body.List {
			es, ok := st.(*ast.ExprStmt)
			if !ok {
				continue
			}
			call, fname := declCall(es.X, name)
			if call == nil {
				continue
			}
			seen[call] = true
			if fname == "Lane" {
				errs = append(errs, d.setLane(call, name)...)
				continue
			}
			phase := declFuncs[fname]
			switch {
			case phase == "" && d.Fault:
				errs = append(errs, fmt.Errorf("%s: %s declares testphase.Fault twice: keep one", d.Pos, d.Test))
			case phase == "":
				d.Fault = true
			case d.Phase != PhaseRace:
				errs = append(errs, fmt.Errorf("%s: %s declares the %s phase and the %s phase: a test runs in one phase, keep one", d.Pos, d.Test, d.Phase, phase))
			default:
				d.Phase = phase
			}
		}
		errs = append(errs, d.checkLane()...)
		decls = append(decls, d)
	}
	// Every other call is one make would not see, or would see for the
	// whole test while it skips only part of it.
	ast.Inspect(f, func(n ast.Node) bool {
		if e, ok := n.(ast.Expr); ok {
			if call, fname := declCall(e, name); call != nil && !seen[call] {
				errs = append(errs, fmt.Errorf("%s:%d: testphase.%s is called outside a Test function's own statements (in a helper, a closure or a subtest): make test lists only a Test function's top-level calls; call it as the first statement of the Test function",
					rel, fset.Position(call.Pos()).Line, fname))
			}
		}
		return true
	})
	return decls, errs, nil
}

// setLane records the lane a testphase.Lane call names: one of the Lane
// constants, through this package's import name pkg, so that the listing
// reads it as the compiler does.
func (d *Decl) setLane(call *ast.CallExpr, pkg string) []error {
	var lane LaneName
	if len(call.Args) == 2 {
		if sel, ok := call.Args[1].(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == pkg {
				lane = laneConsts[sel.Sel.Name]
			}
		}
	}
	switch {
	case lane == "":
		return []error{fmt.Errorf("%s: %s declares a lane make test cannot read: write testphase.Lane(t, testphase.LaneX) with one of the Lane constants", d.Pos, d.Test)}
	case d.Lane != "":
		return []error{fmt.Errorf("%s: %s declares testphase.Lane twice: a test runs in one lane, keep one", d.Pos, d.Test)}
	}
	d.Lane = lane
	return nil
}

// checkLane gives an alone test without a lane LaneDefault, and refuses a
// lane on a test of another phase: only the alone phase runs in lanes.
func (d *Decl) checkLane() []error {
	switch {
	case d.Phase == PhaseAlone && d.Lane == "":
		d.Lane = LaneDefault
	case d.Phase != PhaseAlone && d.Lane != "":
		d.Lane = ""
		return []error{fmt.Errorf("%s: %s declares a lane but not testphase.Alone: only the alone phase runs in lanes; declare Alone too, or drop the lane", d.Pos, d.Test)}
	}
	return nil
}

// importName returns the name under which f imports this package, "" when
// it does not; an import under another name (or a dot import) is an error.
func importName(f *ast.File, rel string) (string, []error) {
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil || path != ImportPath {
			continue
		}
		if imp.Name != nil && imp.Name.Name != "testphase" {
			return "", []error{fmt.Errorf("%s imports %s as %s: import it as testphase, the name make test's listing (and the check against a text search) reads", rel, ImportPath, imp.Name.Name)}
		}
		return "testphase", nil
	}
	return "", nil
}

// isTest reports whether fn is a test function go test runs: TestXxx(t *testing.T).
func isTest(fn *ast.FuncDecl) bool {
	name := fn.Name.Name
	if fn.Recv != nil || !strings.HasPrefix(name, "Test") || name == "TestMain" {
		return false
	}
	if rest := name[len("Test"):]; rest != "" && rest[0] >= 'a' && rest[0] <= 'z' {
		return false
	}
	return fn.Type.Params != nil && len(fn.Type.Params.List) == 1
}

// declCall returns e as a call of one of the declaring functions through
// pkg (the import's name), and that function's name.
func declCall(e ast.Expr, pkg string) (*ast.CallExpr, string) {
	call, ok := e.(*ast.CallExpr)
	if !ok || pkg == "" {
		return nil, ""
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return nil, ""
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok || id.Name != pkg {
		return nil, ""
	}
	if _, ok := declFuncs[sel.Sel.Name]; !ok {
		return nil, ""
	}
	return call, sel.Sel.Name
}

// Select returns the declarations of kind (a phase's name, or KindFault)
// whose package matches one of patterns (go test's "./...", "./x/...", or a
// package directory; none means all).
func Select(decls []Decl, kind string, patterns ...string) ([]Decl, error) {
	if kind != KindFault && (!slices.Contains(Phases, Phase(kind)) || Phase(kind) == PhaseRace) {
		return nil, fmt.Errorf("%q: want one of measured, timed, alone or fault (the race phase is every package, less the tests of the others)", kind)
	}
	var out []Decl
	for _, d := range decls {
		if (kind == KindFault && d.Fault || Phase(kind) == d.Phase) && matchPkg(d.Pkg, patterns) {
			out = append(out, d)
		}
	}
	return out, nil
}

// InLane returns the declarations of selected (Select's result for the
// alone phase) in lane.
func InLane(selected []Decl, lane LaneName) ([]Decl, error) {
	if !slices.Contains(Lanes, lane) {
		return nil, fmt.Errorf("lane %q: want one of %s", lane, laneNames())
	}
	var out []Decl
	for _, d := range selected {
		if d.Lane == lane {
			out = append(out, d)
		}
	}
	return out, nil
}

// UsedLanes returns the lanes of selected that hold at least one test, in
// Lanes' order.
func UsedLanes(selected []Decl) []LaneName {
	var out []LaneName
	for _, l := range Lanes {
		if slices.ContainsFunc(selected, func(d Decl) bool { return d.Lane == l }) {
			out = append(out, l)
		}
	}
	return out
}

func matchPkg(pkg string, patterns []string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		p = strings.TrimSuffix(filepath.ToSlash(p), "/")
		if p != "." && !strings.HasPrefix(p, "./") {
			p = "./" + p
		}
		if p == pkg {
			return true
		}
		if base, ok := strings.CutSuffix(p, "/..."); ok {
			if base == "." || pkg == base || strings.HasPrefix(pkg, base+"/") {
				return true
			}
		}
	}
	return false
}

// GoTestArgs returns the arguments of the go test that runs selected (from
// Select over all, List's result): the -run pattern of their names,
// anchored, and their packages, each once; the pattern is quoted for a
// shell. None without selected. One -run pattern covers every package: a
// test of the same name in another of those packages that is not selected
// would run with them, and is an error naming both.
func GoTestArgs(all, selected []Decl) ([]string, error) {
	if len(selected) == 0 {
		return nil, nil
	}
	var names, pkgs []string
	for _, d := range selected {
		if !slices.Contains(names, d.Test) {
			names = append(names, d.Test)
		}
		if !slices.Contains(pkgs, d.Pkg) {
			pkgs = append(pkgs, d.Pkg)
		}
	}
	var errs []error
	for _, d := range all {
		if slices.Contains(pkgs, d.Pkg) && slices.Contains(names, d.Test) && !slices.Contains(selected, d) {
			errs = append(errs, fmt.Errorf("%s: %s of %s has the name of a test this phase runs in another package, and would run with it: rename one, or declare it too", d.Pos, d.Test, d.Pkg))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.Sort(names)
	slices.Sort(pkgs)
	return append([]string{"-run", "'^(" + strings.Join(names, "|") + ")$'"}, pkgs...), nil
}
