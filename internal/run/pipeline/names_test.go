package pipeline_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// moduleRoot is the module's root, from this package's folder.
const moduleRoot = "../../.."

// stringLiterals calls found with every string literal of the module's
// non-test Go files, except those under the folders skipped (relative to
// the module root), with its position.
func stringLiterals(t *testing.T, skip []string, found func(pos token.Position, s string)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(moduleRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(moduleRoot, path)
		for _, s := range skip {
			if rel == s {
				return filepath.SkipDir
			}
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && rel != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					pos := fset.Position(lit.Pos())
					pos.Filename, _ = filepath.Rel(moduleRoot, pos.Filename)
					found(pos, s)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestUnitNamesOnlyInUnits: no non-test file outside package units spells
// a bench unit ("tok/s", "ttft-p99-ns") or a piece of one used to match
// units by suffix ("-p99-ns", "-ns"): they use the package's names and
// its KindOf, Label and Lookup.
func TestUnitNamesOnlyInUnits(t *testing.T) {
	t.Parallel()
	stringLiterals(t, []string{"internal/vocab/units"}, func(pos token.Position, s string) {
		for _, u := range units.All() {
			if s == u.Name || (strings.HasPrefix(s, "-") && strings.HasSuffix(u.Name, s)) {
				t.Errorf("%s: %q spells unit %s: use package units' constant (one home per name)", pos, s, u.Name)
				return
			}
		}
	})
}

// TestMetricNamesOnlyInScrape: vLLM's metric names ("vllm:num_requests_running")
// are constants of package scrape; only the simulator, which serves them,
// spells them too.
func TestMetricNamesOnlyInScrape(t *testing.T) {
	t.Parallel()
	metric := regexp.MustCompile(`(^|[^a-z])vllm:[a-z_]`)
	stringLiterals(t, []string{"internal/target/scrape", "internal/vllmsim"}, func(pos token.Position, s string) {
		if metric.MatchString(s) {
			t.Errorf("%s: %q spells a vLLM metric name: use package scrape's constants", pos, s)
		}
	})
}

// TestBenchNamesOnlyInBenchname: benchmark names are built and parsed by
// package benchname alone; no other file starts a literal with one of
// their keys ("profile=", "/scenario=").
func TestBenchNamesOnlyInBenchname(t *testing.T) {
	t.Parallel()
	key := regexp.MustCompile(`^/?(profile|scenario)=`)
	stringLiterals(t, []string{"internal/vocab/benchname"}, func(pos token.Position, s string) {
		if key.MatchString(s) {
			t.Errorf("%s: %q builds or parses a benchmark name: use package benchname", pos, s)
		}
	})
}

// TestServerFamilyOnlyInServerfamily: what is vLLM's as a server (its
// metric prefix, launch layouts, batch-cap flag, prefix-caching label and
// request extras) is spelled in package serverfamily alone; the stages
// read it from a family. The simulator, which is a vLLM server, and the
// third-party servers' own families spell theirs.
func TestServerFamilyOnlyInServerfamily(t *testing.T) {
	t.Parallel()
	vllms := map[string]bool{
		"vllm:": true, "api_server": true, "vllm.entrypoints.openai.api_server": true,
		"max-num-seqs": true, "enable_prefix_caching": true,
		"min_tokens": true, "ignore_eos": true, "continuous_usage_stats": true,
	}
	skip := []string{"internal/target/serverfamily", "internal/vllmsim", "internal/thirdparty", "cmd/vllm-sim"}
	stringLiterals(t, skip, func(pos token.Position, s string) {
		if vllms[s] {
			t.Errorf("%s: %q is vLLM's as a server: read it from a serverfamily.Family", pos, s)
		}
	})
}
