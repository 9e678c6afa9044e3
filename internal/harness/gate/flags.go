package gate

import (
	"errors"
	"io"

	"github.com/spf13/pflag"
	vllmperf "github.com/vllmperf/vllmperf"

	"github.com/vllmperf/vllmperf/internal/exitstatus"
	"github.com/vllmperf/vllmperf/internal/harness/thresholds"
)

// Flags are the flags of `vllmperf gate`; Run does what they say.
type Flags struct {
	Baseline   string
	New        string
	Thresholds string
	Force      bool
	JSON       string
	Output     Output
}

// Register defines the flags on f.
func (o *Flags) Register(f *pflag.FlagSet) {
	f.StringVar(&o.Baseline, "baseline", "", "the stored results to compare against (benchfmt)")
	f.StringVar(&o.New, "new", "", "the results to judge (benchfmt)")
	f.StringVar(&o.Thresholds, "thresholds", "", "thresholds.yaml with the gate's settings and limits (default ./"+vllmperf.ThresholdsFile+" if present, else the shipped one, built in); a file given that is missing is an error")
	f.BoolVar(&o.Force, "force", false, "compare even when gpu, model, backend, image or the profiles differ")
	f.StringVar(&o.JSON, "json", "", "also write the JSON report to this file, whatever --format says (make bench writes gate.json into the results folder)")
	o.Output.Register(f, Formats)
}

// Run compares the files, publishes the report (Output) and writes
// --json. Its error follows package exitstatus: bad input is a usage
// error, a regression or breached limit fails, an undecided gate is
// inconclusive.
func (o *Flags) Run(stdout, stderr io.Writer) error {
	rep, err := o.compare()
	if err != nil {
		return exitstatus.Usage(err)
	}
	if err := o.Output.Publish(rep, stdout, stderr, "vllmperf gate", ""); err != nil {
		return err
	}
	if o.JSON != "" {
		if err := rep.WriteFile(o.JSON, "json"); err != nil {
			return err
		}
	}
	return ExitError(rep, rep.InconclusiveReason())
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
	return Compare(base, next, set, Options{Force: o.Force})
}
