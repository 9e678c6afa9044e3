package perfgate

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSettingsListed holds Settings to the source: the envvar settings
// the package's other non-test files name are exactly those settings.go
// lists.
func TestSettingsListed(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	used, listed := map[string]bool{}, map[string]bool{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		into := used
		if path == "settings.go" {
			into = listed
		}
		envvarNames(t, path, into)
	}
	if got, want := slices.Sorted(maps.Keys(listed)), slices.Sorted(maps.Keys(used)); !slices.Equal(got, want) {
		t.Errorf("settings.go lists envvar.%v; the package reads envvar.%v: keep Settings to what it reads", got, want)
	}
	if len(used) < 10 {
		t.Fatalf("found %d envvar settings in the source, want the perf gate's 20 or so: the parse missed them", len(used))
	}
}

// envvarNames adds the envvar.X selectors of the file at path (but the
// type Setting) to into.
func envvarNames(t *testing.T, path string, into map[string]bool) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "envvar" && sel.Sel.Name != "Setting" {
				into[sel.Sel.Name] = true
			}
		}
		return true
	})
}
