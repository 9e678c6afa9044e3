package gate

import (
	"fmt"
	"strings"

	"github.com/vllmperf/vllmperf/internal/gate/gatemath"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// Config is a comparison of two files, as a command asks for it.
type Config struct {
	// Baseline and New are the files (Go's benchmark format).
	Baseline, New string
	// Thresholds is thresholds.yaml's path; "" resolves the default
	// (thresholds.Resolve).
	Thresholds string
	// Force compares despite configuration differences (Options.Force).
	Force bool
	// Filter is a benchstat (benchproc) query both sides are cut to
	// before the comparison; "" gates everything.
	Filter string
	// ForceFlag and FilterFlag are how the report names Force and Filter
	// (the command's flags); "forced" and "filter" without them.
	ForceFlag, FilterFlag string
}

// CompareFiles reads the files cfg names, cuts them to its filter and
// compares them. Its errors are about the input: the files, the
// thresholds, a *FilterError or *EmptySelectionError for the filter, a
// *MismatchError for sides measured on different setups.
func CompareFiles(cfg Config) (*Report, error) {
	set, err := thresholds.Resolve(cfg.Thresholds, ".")
	if err != nil {
		return nil, err
	}
	base, err := input.ReadFile(cfg.Baseline)
	if err != nil {
		return nil, err
	}
	next, err := input.ReadFile(cfg.New)
	if err != nil {
		return nil, err
	}
	sel, err := input.SelectBoth(cfg.Filter, base, next)
	if err != nil {
		return nil, err
	}
	if sel != nil {
		sel.Flag = cfg.FilterFlag
	}
	rep, err := Compare(base, next, set, Options{Force: cfg.Force, ForceFlag: cfg.ForceFlag})
	if rep != nil {
		rep.Selection = sel
	}
	return rep, err
}

// InconclusiveReason says why an inconclusive report is so, and how many
// runs a side would decide it.
func (r *Report) InconclusiveReason() string {
	reason := strings.TrimPrefix(r.Headline(), string(OutcomeInconclusive)+": ")
	switch need := r.RunsNeeded(); {
	case need > 0:
		reason += fmt.Sprintf("; about %d runs a side would decide (go test -count %d)", need, need)
	case need < 0:
		reason += fmt.Sprintf("; some rows need more than %d runs a side: see the report", gatemath.MaxRunsEstimate)
	}
	return reason
}
