package input

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"
)

// A FilterError is a query that is not in benchstat's filter syntax.
type FilterError struct {
	Query string
	Err   error
}

func (e *FilterError) Error() string { return "filter " + e.Detail() }

// Detail is the error after the word for the filter, for a command to
// name its flag: `"/profile:(basic": ... (the syntax is benchstat's ...)`.
func (e *FilterError) Detail() string {
	return fmt.Sprintf("%q: %v (the syntax is benchstat's: /profile:basic /scenario:ttft-tpot; see 'go doc golang.org/x/perf/benchproc/syntax')", e.Query, e.Err)
}

func (e *FilterError) Unwrap() error { return e.Err }

// NewSelection parses query in benchstat's filter syntax
// (golang.org/x/perf/benchproc: "/profile:basic /scenario:ttft-tpot",
// "-/scenario:startup", ".unit:(tok/s OR ttft-p99-ns)"); a query it
// cannot parse is a *FilterError.
func NewSelection(query string) (*benchproc.Filter, error) {
	f, err := benchproc.NewFilter(query)
	if err != nil {
		return nil, &FilterError{Query: query, Err: err}
	}
	return f, nil
}

// Keep drops the results f does not select, and the values of the units
// it does not select, from in; it returns how many result lines it
// dropped. A failed benchmark's checks (RunChecks) are kept when f selects
// its name under the configuration of the side's first result (a failed
// benchmark has no values, so a query on .unit alone drops them).
func (in *Input) Keep(f *benchproc.Filter) (int, error) {
	kept := in.Results[:0]
	dropped := 0
	for _, res := range in.Results {
		m, err := f.Match(res)
		if err != nil {
			return 0, fmt.Errorf("%s: the filter: %w", in.Name, err)
		}
		if !m.Apply(res) {
			dropped++
			continue
		}
		kept = append(kept, res)
	}
	in.Results = kept
	var checks []RunCheck
	for _, c := range in.RunChecks {
		probe := &benchfmt.Result{Name: benchfmt.Name(c.Benchmark)}
		if len(in.Results) > 0 {
			probe.Config = in.Results[0].Config
		}
		m, err := f.Match(probe)
		if err != nil {
			return 0, fmt.Errorf("%s: the filter: %w", in.Name, err)
		}
		if m.Any() {
			checks = append(checks, c)
		}
	}
	in.RunChecks = checks
	return dropped, nil
}

// nearbyResults is the hint for a results file that is not there: the
// .txt files its folder holds (the repository ships baselines/sim.txt
// only; a GPU's baseline is recorded on that GPU), or "".
func nearbyResults(path string, err error) string {
	if !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	dir := filepath.Dir(path)
	found, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	if len(found) == 0 {
		return ""
	}
	for i := range found {
		found[i] = filepath.Base(found[i])
	}
	if len(found) > 5 {
		found = append(found[:5], "…")
	}
	return fmt.Sprintf(" (%s holds %s; a GPU's baseline is recorded on that GPU: make baseline-gpu, or vllmperf perf-gate's store: docs/verdict.md)", dir, strings.Join(found, ", "))
}
