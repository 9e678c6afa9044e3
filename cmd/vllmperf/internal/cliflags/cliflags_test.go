package cliflags

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// TestOutput: --format and --step-summary bind a verdict.Output whose
// Check knows the formats given.
func TestOutput(t *testing.T) {
	t.Setenv(verdict.StepSummaryEnv, "from-env.md")
	for _, tc := range []struct {
		name    string
		args    []string
		want    verdict.Output
		wantErr string
	}{
		// Nothing given: text, and GitHub Actions' summary file.
		{"defaults", nil, verdict.Output{Format: "text", StepSummary: "from-env.md"}, ""},
		// Both given; an empty summary writes none.
		{"given", []string{"--format", "markdown", "--step-summary", ""}, verdict.Output{Format: "markdown"}, ""},
		// A format not offered is refused with the choices, naming the
		// flag once the command explains it.
		{"unknown", []string{"--format", "html"}, verdict.Output{Format: "html", StepSummary: "from-env.md"}, `--format "html": want one of text, markdown`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o verdict.Output
			fs := pflag.NewFlagSet("gate", pflag.ContinueOnError)
			Output(fs, &o, []string{"text", "markdown"})
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if o.Format != tc.want.Format || o.StepSummary != tc.want.StepSummary {
				t.Errorf("bound %+v, want format %q, step summary %q", o, tc.want.Format, tc.want.StepSummary)
			}
			err := Explain(o.Check())
			if (err == nil) != (tc.wantErr == "") || (err != nil && err.Error() != tc.wantErr) {
				t.Errorf("Check = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestLibrariesFreeOfCobra: flags, cobra wiring and help live under
// cmd/; no package under internal/ imports cobra or pflag (their option
// structs are bound here).
func TestLibrariesFreeOfCobra(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..", "..", "..", "internal")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "github.com/spf13/cobra" || p == "github.com/spf13/pflag" {
				rel, _ := filepath.Rel(filepath.Join("..", "..", "..", ".."), path)
				t.Errorf("%s imports %s: bind the library's option struct in cmd/vllmperf/internal/cliflags instead", rel, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
