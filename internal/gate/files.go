package gate

import (
	"fmt"
	"io"
	"strings"

	"github.com/vllmperf/vllmperf/internal/outfile"
)

// WriteFile writes the report in format to path, by a temporary file
// renamed onto it: a failed write leaves the old file whole.
func (r *Report) WriteFile(path, format string) error {
	if err := outfile.Replace(path, 0o644, func(w io.Writer) error { return r.WriteFormat(w, format) }); err != nil {
		return fmt.Errorf("the %s report: %w", format, err)
	}
	return nil
}

// InconclusiveReason says why an inconclusive report is so, and how many
// runs a side would decide it.
func (r *Report) InconclusiveReason() string {
	reason := strings.TrimPrefix(r.Headline(), string(OutcomeInconclusive)+": ")
	switch need := r.RunsNeeded(); {
	case need > 0:
		reason += fmt.Sprintf("; about %d runs a side would decide (go test -count %d)", need, need)
	case need < 0:
		reason += fmt.Sprintf("; some rows need more than %d runs a side: see the report", MaxRunsEstimate)
	}
	return reason
}
