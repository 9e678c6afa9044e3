// Package docfigures keeps the figures README.md and docs/ quote in step
// with the commands that produce them. A generated figure sits between two
// marker comments,
//
//	<!-- figures NAME: begin -->…<!-- figures NAME: end -->
//
// and the test that computes it calls Sync: with VLLMPERF_UPDATE_FIGURES=1
// (make figures) it writes the figure in place; otherwise it fails when the
// committed text differs from what the test computed from committed
// inputs, so a figure edited by hand, or one whose inputs changed, fails
// make test.
package docfigures

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// mu serialises Sync's read-modify-write of a document among a package's
// parallel tests (make figures runs the packages one at a time, -p 1).
var mu sync.Mutex

// EnvUpdate set to 1 makes Sync rewrite the figures instead of checking them.
const EnvUpdate = "VLLMPERF_UPDATE_FIGURES"

// Markers returns the begin and end comments of the figure called name.
func Markers(name string) (begin, end string) {
	return "<!-- figures " + name + ": begin -->", "<!-- figures " + name + ": end -->"
}

// Replace returns doc with the text between name's markers replaced by
// body. It is an error when the markers are missing, repeated or out of
// order.
func Replace(doc, name, body string) (string, error) {
	begin, end := Markers(name)
	if strings.Count(doc, begin) != 1 || strings.Count(doc, end) != 1 {
		return "", fmt.Errorf("want exactly one %q and one %q", begin, end)
	}
	i := strings.Index(doc, begin) + len(begin)
	j := strings.Index(doc, end)
	if j < i {
		return "", fmt.Errorf("%q comes before %q", end, begin)
	}
	return doc[:i] + body + doc[j:], nil
}

// Sync checks (or, with EnvUpdate=1, writes) the figure name in file, a
// path from the module root, against body.
func Sync(t testing.TB, file, name, body string) {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	path := filepath.Join(ModuleRoot(t), file)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	got, err := Replace(doc, name, body)
	if err != nil {
		t.Fatalf("%s: figure %s: %v", file, name, err)
	}
	if got == doc {
		return
	}
	if os.Getenv(EnvUpdate) == "1" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: figure %s rewritten", file, name)
		return
	}
	begin, end := Markers(name)
	old := doc[strings.Index(doc, begin)+len(begin) : strings.Index(doc, end)]
	t.Errorf("%s: figure %s differs from what its command computes (make figures rewrites it; do not edit it by hand):\n--- committed\n%s\n--- computed\n%s", file, name, old, body)
}

// ModuleRoot is the folder of go.mod above the test's working directory.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}
