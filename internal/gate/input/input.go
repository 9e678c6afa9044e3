package input

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/vllmperf/vllmperf/internal/vocab/units"
	"golang.org/x/perf/benchfmt"
)

// Input is one side of a comparison: the benchmark results of one file (or
// of several runs collected in memory) and the unit metadata (`Unit X
// better=lower` lines) read with them.
type Input struct {
	// Name names the side in messages and reports (the file's path).
	Name string
	// Results are the benchmark lines, one per run of a benchmark.
	Results []*benchfmt.Result
	// Units holds the `Unit` lines' metadata, keyed by benchfmt's tidied
	// unit (use Units.Get with the unit as written).
	Units benchfmt.UnitMetadataMap
	// RunChecks are the checks that failed a benchmark (its `--- FAIL:`
	// block; such a run prints no result line).
	RunChecks []RunCheck
}

// maxSyntaxErrors is how many malformed lines an error message lists.
const maxSyntaxErrors = 5

// ReadFile reads a file in Go's benchmark format (`go test -bench` output,
// docs/bench-format.md).
func ReadFile(path string) (*Input, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read benchmark results: %w%s", err, nearbyResults(path, err))
	}
	defer f.Close()
	return Read(f, path)
}

// Read reads Go's benchmark format from r; name is used in messages. A
// malformed benchmark or Unit line is an error (a gate must not judge a
// file it half understood), as is a file without any benchmark line or a
// `better=` that is not lower, higher or none.
func Read(r io.Reader, name string) (*Input, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB: not a benchmark results file, or give one run's results", name, MaxFileBytes>>20)
	}
	data = dropNameThenFail(data)
	in := &Input{Name: name, RunChecks: readRunChecks(data)}
	rd := benchfmt.NewReader(bytes.NewReader(data), name)
	var bad []string
	var nonFinite []error
	nBad := 0
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			nBad++
			if len(bad) < maxSyntaxErrors {
				bad = append(bad, rec.Error())
			}
		case *benchfmt.Result:
			if err := checkFinite(rec); err != nil {
				nonFinite = append(nonFinite, err)
				if len(nonFinite) == maxSyntaxErrors {
					return nil, errors.Join(nonFinite...)
				}
				continue
			}
			in.Results = append(in.Results, rec.Clone())
		}
	}
	if err := rd.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(nonFinite) > 0 {
		return nil, errors.Join(nonFinite...)
	}
	if nBad > 0 {
		more := ""
		if nBad > len(bad) {
			more = fmt.Sprintf("\n  (and %d more)", nBad-len(bad))
		}
		return nil, fmt.Errorf("%s: %d malformed benchmark line(s); the file is cut short or not `go test -bench` output:\n  %s%s",
			name, nBad, strings.Join(bad, "\n  "), more)
	}
	if len(in.Results) == 0 && len(in.RunChecks) == 0 {
		return nil, fmt.Errorf("%s: no benchmark results: want the output of `go test -run '^$' -bench Perf` (lines starting with Benchmark)", name)
	}
	in.Units = rd.Units()
	if err := checkUnitLines(in.Units); err != nil {
		return nil, err
	}
	return in, nil
}

// MaxFileBytes bounds a benchmark results file (the suite's biggest,
// baselines/sim.txt, is about 1 MiB).
const MaxFileBytes = 256 << 20

// checkFinite refuses a NaN or infinite value (strconv reads "NaN" and
// "Inf"): no statistic of the gate means anything with one, and a rank
// test cannot order it.
func checkFinite(r *benchfmt.Result) error {
	for _, v := range r.Values {
		if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
			file, line := r.Pos()
			unit, value := AsWritten(v)
			return fmt.Errorf("%s:%d: Benchmark%s %v %s: a value must be a finite number; rerun the benchmark or remove the line", file, line, r.Name.Full(), value, unit)
		}
	}
	return nil
}

// checkUnitLines refuses a `better=` value the gate cannot read.
func checkUnitLines(meta benchfmt.UnitMetadataMap) error {
	var errs []error
	for _, m := range SortedMetadata(meta) {
		if m.Key != "better" {
			continue
		}
		if _, err := units.ParseDirection(m.Value); err != nil {
			file, line := m.Pos()
			errs = append(errs, fmt.Errorf("%s:%d: Unit %s better=%s: want better=lower, better=higher or better=none", file, line, m.OrigUnit, m.Value))
		}
	}
	return errors.Join(errs...)
}

// FileDirection is the direction the input's `Unit unit better=` line
// gives, Unset without one. unit is written as in the benchmark lines.
func (in *Input) FileDirection(unit string) (units.Direction, *benchfmt.UnitMetadata) {
	if in == nil || in.Units == nil {
		return units.Unset, nil
	}
	m := in.Units.Get(unit, "better")
	if m == nil {
		return units.Unset, nil
	}
	d, err := units.ParseDirection(m.Value)
	if err != nil {
		return units.Unset, nil
	}
	return d, m
}

// SortedMetadata lists the Unit lines' metadata by unit, then key.
func SortedMetadata(meta benchfmt.UnitMetadataMap) []*benchfmt.UnitMetadata {
	out := make([]*benchfmt.UnitMetadata, 0, len(meta))
	for _, m := range meta {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Unit != out[j].Unit {
			return out[i].Unit < out[j].Unit
		}
		return out[i].Key < out[j].Key
	})
	return out
}

// AsWritten returns a value as the file wrote it: benchfmt converts
// units containing "ns" to seconds ("ttft-p99-ns" → "ttft-p99-sec"); the
// gate keeps the original unit, the one thresholds.yaml names.
func AsWritten(v benchfmt.Value) (unit string, value float64) {
	if v.OrigUnit != "" {
		return v.OrigUnit, v.OrigValue
	}
	return v.Unit, v.Value
}
