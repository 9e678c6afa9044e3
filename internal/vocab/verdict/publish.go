package verdict

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
	"github.com/vllmperf/vllmperf/internal/vocab/setting"
)

// StepSummaryEnv names the file GitHub Actions shows as the job's summary;
// the gate commands append their markdown report there when it is set.
const StepSummaryEnv = "GITHUB_STEP_SUMMARY"

// A Format is one way a report is written: text, markdown, json, ...
type Format struct {
	Name  string
	Write func(io.Writer) error
}

// FormatNames lists the formats' names, in order.
func FormatNames(fs []Format) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

// WriteAs writes with the format named name among fs.
func WriteAs(w io.Writer, name string, fs []Format) error {
	for _, f := range fs {
		if f.Name == name {
			return f.Write(w)
		}
	}
	return fmt.Errorf("unknown format %q: want %s", name, strings.Join(FormatNames(fs), ", "))
}

// A Published report is one that a gate command publishes and exits by: the
// gate's Report (package gate), history's CheckReport.
type Published interface {
	Formats() []Format
	Outcome() Outcome
	Headline() string
	WriteMarkdown(io.Writer) error
}

// FormatFlag is the flag that selects a gate command's Output.Format
// (cliflags.Output binds it); the reports name it in their hints.
const FormatFlag = "--format"

// Output is where a gate command's report goes: stdout in --format, and
// the markdown report appended to --step-summary (GitHub Actions' job
// summary by default).
// The command binds the fields to --format and --step-summary
// (cmd/vllmperf/internal/cliflags).
type Output struct {
	Format      string
	StepSummary string
	// Formats are the names --format accepts.
	Formats []string
}

// Check refuses a format that is not one of Formats.
func (o *Output) Check() error {
	if !slices.Contains(o.Formats, o.Format) {
		return setting.Scope("verdict")("{Format} %q: want one of %s", o.Format, strings.Join(o.Formats, ", "))
	}
	return nil
}

// Publish writes v to stdout in Format and appends intro (markdown, may
// be empty) and its markdown report to the step summary; a summary that
// cannot be written is a warning on stderr, naming the command.
func (o *Output) Publish(v Published, stdout, stderr io.Writer, command, intro string) error {
	if err := WriteAs(stdout, o.Format, v.Formats()); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	if o.StepSummary == "" {
		return nil
	}
	err := appendTo(o.StepSummary, func(w io.Writer) error {
		if _, err := io.WriteString(w, intro); err != nil {
			return err
		}
		return v.WriteMarkdown(w)
	})
	if err != nil {
		fmt.Fprintf(stderr, "%s: warning: %s: %v\n", command, StepSummaryEnv, err)
	}
	return nil
}

// ExitError is the verdict as a command's result: nil for PASS (exit 0),
// the headline for FAIL (exit 1), INCONCLUSIVE with reason (exit 3).
func ExitError(v Published, reason string) error {
	switch v.Outcome() {
	case OutcomeFail:
		return errors.New(v.Headline())
	case OutcomeInconclusive:
		return exitstatus.Inconclusive(reason)
	case OutcomeInvalid:
		return exitstatus.Usage(errors.New(v.Headline())) // exit 2: not a sound measurement
	}
	return nil
}

// appendTo appends what write writes to path.
func appendTo(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	werr := write(f)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("%s: %w", path, werr)
	}
	return nil
}

// ErrWriter writes to W until a write fails and keeps the first error in
// Err: a report's many writes are checked once, at the end.
type ErrWriter struct {
	W   io.Writer
	Err error
}

// Printf writes a formatted line unless a write failed before.
func (e *ErrWriter) Printf(format string, args ...any) {
	if e.Err == nil {
		_, e.Err = fmt.Fprintf(e.W, format, args...)
	}
}

func (e *ErrWriter) Write(p []byte) (int, error) {
	if e.Err != nil {
		return 0, e.Err
	}
	n, err := e.W.Write(p)
	e.Err = err
	return n, err
}
