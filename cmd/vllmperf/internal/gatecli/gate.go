package gatecli

import (
	"errors"
	"fmt"
	"io"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/gate/render"
	"github.com/vllmperf/vllmperf/internal/outfile"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// The flags the gate's messages name (cliflags.Gate defines them).
const (
	forceFlag  = "--force"
	filterFlag = "--filter"
)

// Flags are the flags of `vllmperf gate`; Run does what they say.
type Flags struct {
	Baseline   string
	New        string
	Thresholds string
	Force      bool
	Filter     string // benchstat's benchproc query; "" gates everything
	JSON       string
	Output     verdict.Output
}

// Run compares the files, publishes the report (Output) and writes
// --json. Its error follows package exitstatus: bad input is a usage
// error, a regression or breached limit fails, an undecided gate is
// inconclusive.
func (o *Flags) Run(stdout, stderr io.Writer) error {
	// --json is checked before the work and written by temporary file
	// and rename (package outfile): a failed write leaves the old file.
	out, err := outfile.Open("--json", o.JSON)
	if err != nil {
		return exitstatus.Usage(err)
	}
	defer out.Discard()
	got, err := o.compare()
	if err != nil {
		return exitstatus.Usage(err)
	}
	rep := render.Of(got)
	// An output that cannot be written is an I/O error (exit 2), never
	// the regression status.
	if err := o.Output.Publish(rep, stdout, stderr, "vllmperf gate", ""); err != nil {
		return exitstatus.Usage(err)
	}
	if err := out.Write(func(w io.Writer) error { return rep.WriteFormat(w, "json") }); err != nil {
		return exitstatus.Usage(err)
	}
	return verdict.ExitError(rep, rep.InconclusiveReason())
}

// compare checks the flags and compares the files; the library's typed
// errors become messages that name the flag to change.
func (o *Flags) compare() (*gate.Report, error) {
	if o.Baseline == "" || o.New == "" {
		return nil, errors.New("gate needs --baseline FILE and --new FILE: the stored results and the new ones, both `go test -bench Perf` output")
	}
	if err := o.Output.Check(); err != nil {
		return nil, err
	}
	rep, err := gate.CompareFiles(gate.Config{
		Baseline: o.Baseline, New: o.New, Thresholds: o.Thresholds,
		Force: o.Force, Filter: o.Filter, ForceFlag: forceFlag, FilterFlag: filterFlag,
	})
	return rep, flagError(err)
}

// flagError words the library's errors about an option as the command's
// flag: a refused setup can be forced, a filter is --filter.
func flagError(err error) error {
	var (
		mm    *input.MismatchError
		bad   *input.FilterError
		empty *input.EmptySelectionError
	)
	switch {
	case errors.As(err, &mm):
		return fmt.Errorf("%w, or pass %s to compare anyway", err, forceFlag)
	case errors.As(err, &bad):
		return fmt.Errorf("%s %s", filterFlag, bad.Detail())
	case errors.As(err, &empty):
		return fmt.Errorf("%s %s", filterFlag, empty.Detail())
	}
	return err
}
