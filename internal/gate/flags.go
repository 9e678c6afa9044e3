package gate

import (
	"errors"
	"io"

	"github.com/vllmperf/vllmperf/internal/outfile"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
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
	rep, err := o.compare()
	if err != nil {
		return exitstatus.Usage(err)
	}
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

// compare checks the flags, reads the files and compares them.
func (o *Flags) compare() (*Report, error) {
	if o.Baseline == "" || o.New == "" {
		return nil, errors.New("gate needs --baseline FILE and --new FILE: the stored results and the new ones, both `go test -bench Perf` output")
	}
	if err := o.Output.Check(); err != nil {
		return nil, err
	}
	set, err := thresholds.Resolve(o.Thresholds, ".")
	if err != nil {
		return nil, err
	}
	base, err := ReadFile(o.Baseline)
	if err != nil {
		return nil, err
	}
	next, err := ReadFile(o.New)
	if err != nil {
		return nil, err
	}
	sel, err := o.selectBoth(base, next)
	if err != nil {
		return nil, err
	}
	rep, err := Compare(base, next, set, Options{Force: o.Force})
	if rep != nil {
		rep.Selection = sel
	}
	return rep, err
}
