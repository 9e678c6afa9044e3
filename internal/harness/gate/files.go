package gate

import (
	"fmt"
	"os"
	"strings"
)

// WriteFile writes the report in format to path.
func (r *Report) WriteFile(path, format string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write the %s report: %w", format, err)
	}
	werr := r.WriteFormat(f, format)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("write the %s report %s: %w", format, path, werr)
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
