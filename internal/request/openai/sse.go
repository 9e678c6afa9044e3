package openai

import (
	"bytes"
	"fmt"
	"io"
)

// headLen is how many bytes of each line eventReader keeps: enough to tell
// a data line and a final "data: [DONE]".
const headLen = 16

// eventReader wraps a streamed response body and bounds what go-openai's
// stream reader buffers. go-openai reads the stream a line at a time with
// bufio.Reader.ReadBytes, which grows without limit on a line that never
// ends, and keeps every non-data line of the stream in an error
// accumulator. eventReader fails the read with a protocolError as soon as
// one line grows past max bytes, or the non-data lines together do, so a
// stream never holds more than about twice max in go-openai's buffers.
//
// It also reports a stream that ends inside an unterminated line, which
// go-openai would silently drop; only a final "data: [DONE]" whose line end
// is missing is let pass.
type eventReader struct {
	body    io.ReadCloser
	max     int64         // cap on one line, and on all non-data lines together
	line    int64         // bytes of the current line so far, without the '\n'
	head    [headLen]byte // the current line's first bytes
	lines   int           // complete lines read
	nonData int64         // bytes of the complete non-data lines so far
	err     error         // sticky: once failed, every Read fails
}

// newEventReader wraps body; max <= 0 means no cap.
func newEventReader(body io.ReadCloser, max int) *eventReader {
	e := &eventReader{body: body, max: int64(max)}
	if max <= 0 {
		e.max = 1<<63 - 1
	}
	return e
}

// Read implements io.Reader. On a violation it returns the bytes before the
// offending line segment together with the error.
func (e *eventReader) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.body.Read(p)
	for i := 0; i < n; {
		seg := p[i:n]
		end := bytes.IndexByte(seg, '\n')
		if end >= 0 {
			seg = seg[:end]
		}
		if e.line+int64(len(seg)) > e.max {
			e.err = &protocolError{msg: fmt.Sprintf("SSE event exceeds %s (line %d of the stream; the client's cap per event)", formatBytes(e.max), e.lines+1)}
			return i, e.err
		}
		if e.line < headLen {
			copy(e.head[e.line:], seg)
		}
		e.line += int64(len(seg))
		if end < 0 {
			break
		}
		i += end + 1
		if e.err = e.endLine(); e.err != nil {
			return i, e.err
		}
	}
	if err == io.EOF && e.line > 0 && !e.harmlessTail() {
		e.err = &protocolError{msg: fmt.Sprintf("stream ended inside an unterminated line (%d bytes without a line end, after %d complete lines)", e.line, e.lines)}
		return n, e.err
	}
	return n, err
}

// endLine accounts for a complete line and starts the next.
func (e *eventReader) endLine() error {
	head := e.currentHead()
	if !bytes.HasPrefix(bytes.TrimLeft(head, " \t\r"), []byte("data:")) {
		// go-openai keeps non-data lines trimmed; a short blank one costs nothing.
		if e.line > headLen || len(bytes.TrimSpace(head)) > 0 {
			e.nonData += e.line
		}
	}
	e.line = 0
	e.lines++
	if e.nonData > e.max {
		return &protocolError{msg: fmt.Sprintf("SSE stream carries more than %s of lines that are not data: lines (by line %d): not an OpenAI event stream?", formatBytes(e.max), e.lines)}
	}
	return nil
}

// currentHead is the kept start of the current line.
func (e *eventReader) currentHead() []byte { return e.head[:min(e.line, headLen)] }

// harmlessTail reports whether the unterminated current line is blank or
// the whole "data: [DONE]" marker, which go-openai would accept.
func (e *eventReader) harmlessTail() bool {
	if e.line > headLen {
		return false
	}
	line := bytes.TrimSpace(e.currentHead())
	if len(line) == 0 {
		return true
	}
	rest, ok := bytes.CutPrefix(line, []byte("data:"))
	return ok && string(bytes.TrimSpace(rest)) == "[DONE]"
}

// Close closes the body.
func (e *eventReader) Close() error { return e.body.Close() }

// formatBytes writes n in the largest binary unit that divides it.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}
