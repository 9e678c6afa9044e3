package vllmfmt

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/vllmperf/vllmperf/internal/run/sample"
)

// MaxSampleLine is the longest line ReadSamples accepts (a sample with tens
// of thousands of chunks).
const MaxSampleLine = 64 << 20

// WriteSamples writes samples as JSON Lines, one sample.Sample per line, in
// the order given. Times keep nanoseconds; the monotonic clock reading is
// not kept.
func WriteSamples(w io.Writer, samples []sample.Sample) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i := range samples {
		if err := enc.Encode(&samples[i]); err != nil {
			return fmt.Errorf("report: sample %d: %w", samples[i].Index, err)
		}
	}
	return bw.Flush()
}

// SyntaxError is a line of a samples file that is not a sample.
type SyntaxError struct {
	Line int // 1-based
	Err  error
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("samples:%d: %v", e.Line, e.Err) }
func (e *SyntaxError) Unwrap() error { return e.Err }

// ReadSamples reads what WriteSamples wrote. Blank lines are skipped; a line
// that is not a sample (bad JSON, an unknown field) is a *SyntaxError
// naming its line.
func ReadSamples(r io.Reader) ([]sample.Sample, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxSampleLine)
	var out []sample.Sample
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		var s sample.Sample
		if err := dec.Decode(&s); err != nil {
			return out, &SyntaxError{Line: n, Err: err}
		}
		if dec.More() {
			return out, &SyntaxError{Line: n, Err: fmt.Errorf("more than one JSON value on the line")}
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return out, &SyntaxError{Line: n + 1, Err: err}
	}
	return out, nil
}
