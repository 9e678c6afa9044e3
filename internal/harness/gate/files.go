package gate

import (
	"fmt"
	"io"
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

// AppendMarkdown appends intro (markdown, may be empty) and the markdown
// report to path: GitHub Actions' job summary ($GITHUB_STEP_SUMMARY).
func (r *Report) AppendMarkdown(path, intro string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, werr := io.WriteString(f, intro)
	if werr == nil {
		werr = r.WriteMarkdown(f)
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("%s: %w", path, werr)
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
