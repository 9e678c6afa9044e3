package gate

import (
	"io"

	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// The publish path lives in package verdict (a leaf that history, upgrade
// and perfgate share without the gate); these are the gate's names for it.

// StepSummaryEnv is verdict.StepSummaryEnv.
const StepSummaryEnv = verdict.StepSummaryEnv

type (
	// Format is verdict.Format.
	Format = verdict.Format
	// Published is verdict.Published.
	Published = verdict.Published
	// Output is verdict.Output.
	Output = verdict.Output
	// ErrWriter is verdict.ErrWriter.
	ErrWriter = verdict.ErrWriter
)

// FormatNames is verdict.FormatNames.
func FormatNames(fs []Format) []string { return verdict.FormatNames(fs) }

// WriteAs is verdict.WriteAs.
func WriteAs(w io.Writer, name string, fs []Format) error { return verdict.WriteAs(w, name, fs) }

// ExitError is verdict.ExitError.
func ExitError(v Published, reason string) error { return verdict.ExitError(v, reason) }
