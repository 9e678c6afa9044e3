package verdict

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// fakeVerdict is a report with a fixed outcome and one line per format.
type fakeVerdict struct{ outcome Outcome }

func (f fakeVerdict) Formats() []Format {
	return []Format{{"text", f.write("text")}, {"markdown", f.write("md")}}
}
func (f fakeVerdict) Outcome() Outcome                { return f.outcome }
func (f fakeVerdict) Headline() string                { return string(f.outcome) + ": headline" }
func (f fakeVerdict) WriteMarkdown(w io.Writer) error { return f.write("md")(w) }
func (f fakeVerdict) write(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s+"\n"); return err }
}

func TestOutputPublish(t *testing.T) {
	t.Parallel()
	summary := filepath.Join(t.TempDir(), "summary.md")
	if err := os.WriteFile(summary, []byte("## earlier step\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := Output{Format: "markdown", StepSummary: summary, Formats: []string{"text", "markdown"}}
	if err := o.Check(); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := o.Publish(fakeVerdict{OutcomePass}, &out, &errOut, "vllmperf gate", "intro\n"); err != nil {
		t.Fatal(err)
	}
	if out.String() != "md\n" || errOut.Len() != 0 {
		t.Errorf("stdout %q, stderr %q; want the markdown report alone", out.String(), errOut.String())
	}
	if got, _ := os.ReadFile(summary); string(got) != "## earlier step\nintro\nmd\n" {
		t.Errorf("step summary = %q, want the intro and report appended", got)
	}

	// A summary that cannot be written is a warning, not a failure.
	o.StepSummary = filepath.Join(summary, "not-a-dir")
	errOut.Reset()
	if err := o.Publish(fakeVerdict{OutcomePass}, io.Discard, &errOut, "vllmperf gate", ""); err != nil || !strings.Contains(errOut.String(), "vllmperf gate: warning: "+StepSummaryEnv) {
		t.Errorf("err %v, stderr %q; want a warning naming %s", err, errOut.String(), StepSummaryEnv)
	}
	// An unknown format is refused with the choices.
	o.Format = "html"
	if err := o.Check(); err == nil || err.Error() != `Format "html": want one of text, markdown` {
		t.Errorf("Check = %v", err)
	}
}

func TestExitError(t *testing.T) {
	t.Parallel()
	if err := ExitError(fakeVerdict{OutcomePass}, ""); err != nil {
		t.Errorf("PASS: %v", err)
	}
	if err := ExitError(fakeVerdict{OutcomeFail}, ""); err == nil || err.Error() != "FAIL: headline" {
		t.Errorf("FAIL: %v", err)
	}
	var ie exitstatus.InconclusiveError
	if err := ExitError(fakeVerdict{OutcomeInconclusive}, "run more"); !errors.As(err, &ie) || ie.Reason != "run more" {
		t.Errorf("INCONCLUSIVE: %v", err)
	}
}
