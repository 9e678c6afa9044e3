package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"strings"
)

// BisectFile is the page `vllmperf bisect` writes into its results folder.
const BisectFile = "bisect.html"

//go:embed bisect.html.tmpl
var bisectSource string

// Bisect is what bisect.html shows (package bisect fills it): the
// outcome, the prediction, each step's evidence and what is known of
// each build.
type Bisect struct {
	// Candidates names the candidate file; Good the known-good build.
	Candidates, Good string
	// Headline is the outcome; Status PASS when the first bad build was
	// named, INCONCLUSIVE otherwise.
	Headline, Status string
	// Prediction is what was predicted before the first step; Elapsed
	// the time spent.
	Prediction, Elapsed string
	Steps               []BisectStep
	Builds              []BisectBuild
}

// BisectStep is one comparison of the bisection.
type BisectStep struct {
	N, Line, Pairs int
	// Build is the candidate line; Verdict good, bad or skip; Status
	// its colour (PASS, FAIL, INCONCLUSIVE).
	Build, Verdict, Status string
	// Evidence is the gate's headline (or why the build was skipped);
	// Parity its output parity line.
	Evidence, Parity string
	// Time is the step's time; Dir its folder, relative to the page.
	Time, Dir string
}

// BisectBuild is one candidate and what the bisection knows of it.
type BisectBuild struct {
	Line                 int
	Build, Known, Status string
}

// bisectTemplate takes the history page's functions, which the common
// templates use.
var bisectTemplate = template.Must(template.Must(template.New("bisect").Funcs(historyFuncs).Funcs(template.FuncMap{
	"join": strings.Join,
	"base": filepath.Base,
}).Parse(bisectSource)).Parse(commonSource))

// BisectHTML writes the bisect page: one self-contained HTML file.
func BisectHTML(w io.Writer, b *Bisect) error {
	if err := bisectTemplate.Execute(w, b); err != nil {
		return fmt.Errorf("%s: %w", BisectFile, err)
	}
	return nil
}

// WriteBisect writes dir/bisect.html and returns its path.
func WriteBisect(dir string, b *Bisect) (string, error) {
	var buf bytes.Buffer
	if err := BisectHTML(&buf, b); err != nil {
		return "", err
	}
	if err := mkdir(dir); err != nil {
		return "", err
	}
	path := filepath.Join(dir, BisectFile)
	return path, writeAtomic(path, buf.Bytes())
}
