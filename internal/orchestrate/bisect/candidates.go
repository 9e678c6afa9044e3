package bisect

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/vllmperf/vllmperf/internal/orchestrate/upgrade"
)

// ErrCandidates is wrapped by the errors about the candidate file: the
// caller's input is wrong, nothing ran.
var ErrCandidates = errors.New("bisect candidates")

// SimLine is the first word of a candidate line that names the embedded
// simulator; the --sim-* flags after it are the build's.
const SimLine = "sim"

// Candidate is one build of the candidate file.
type Candidate struct {
	// Line is the candidate's line number in the file (1-based).
	Line int
	// Text is the line as written, trimmed.
	Text string
	// Side is the build as the upgrade gate runs it: an image, or the
	// embedded simulator with the line's flags.
	Side upgrade.Side
}

// Name is the candidate for people: "line 5 (sim --sim-slowdown 1.25)".
func (c Candidate) Name() string { return fmt.Sprintf("line %d (%s)", c.Line, c.Text) }

// ReadCandidates reads a candidate file (ParseCandidates).
func ReadCandidates(path string) ([]Candidate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCandidates, err)
	}
	return ParseCandidates(path, data)
}

// ParseCandidates reads the builds in order, the first known good, the
// last known bad: one a line, an image reference (vllm/vllm-openai:v0.11.0,
// an @sha256: digest, a nightly tag) or "sim" followed by --sim-* flags
// (the embedded simulator). Blank lines and lines starting with # are
// skipped; a # after white space starts a comment. All builds must be
// images, or all simulators: one backend for the whole bisection.
func ParseCandidates(source string, data []byte) ([]Candidate, error) {
	var out []Candidate
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if i := strings.Index(text, " #"); i >= 0 {
			text = text[:i]
		}
		text = strings.TrimSpace(text)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Fields(text)
		c := Candidate{Line: n, Text: strings.Join(fields, " ")}
		switch {
		case fields[0] == SimLine:
			c.Side = upgrade.Side{Image: upgrade.InProcess, SimArgs: fields[1:]}
			for _, a := range fields[1:] {
				if strings.HasPrefix(a, "-") && !strings.HasPrefix(strings.TrimLeft(a, "-"), "sim-") {
					return nil, fmt.Errorf("%w: %s:%d: %q is not a --sim-* flag: a simulator line is \"sim\" and --sim-* flags (vLLM's flags belong in the profile)", ErrCandidates, source, n, a)
				}
			}
		case len(fields) > 1:
			return nil, fmt.Errorf("%w: %s:%d: %q: one image reference a line (e.g. vllm/vllm-openai:v0.11.0), or \"sim\" and --sim-* flags", ErrCandidates, source, n, text)
		default:
			c.Side = upgrade.Side{Image: fields[0]}
		}
		if len(out) > 0 && (out[0].Side.Image == upgrade.InProcess) != (c.Side.Image == upgrade.InProcess) {
			return nil, fmt.Errorf("%w: %s:%d: %s mixes the embedded simulator with images (line %d is %s): bisect images or simulator settings, not both", ErrCandidates, source, n, c.Text, out[0].Line, out[0].Text)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCandidates, source, err)
	}
	if len(out) < 2 {
		return nil, fmt.Errorf("%w: %s has %d builds: give at least 2, one a line, the known-good first and the known-bad last", ErrCandidates, source, len(out))
	}
	return out, nil
}
