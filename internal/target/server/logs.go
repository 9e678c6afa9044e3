package server

import (
	"strings"
	"sync"

	"github.com/testcontainers/testcontainers-go"
)

// lineRing keeps the last lines written to it, with secrets redacted. It
// is an io.Writer (for in-process servers) and a testcontainers log
// consumer (for containers).
type lineRing struct {
	mu      sync.Mutex
	max     int
	lines   []string
	partial string
	redact  func(string) string
}

// ringLines is how many lines a server's log buffer keeps.
const ringLines = 2000

func newLineRing(redact func(string) string) *lineRing {
	if redact == nil {
		redact = func(s string) string { return s }
	}
	return &lineRing{max: ringLines, redact: redact}
}

// Write splits p into lines; an unterminated tail waits for the next write.
func (r *lineRing) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.partial + string(p)
	parts := strings.Split(s, "\n")
	r.partial = parts[len(parts)-1]
	for _, l := range parts[:len(parts)-1] {
		r.add(strings.TrimRight(l, "\r"))
	}
	return len(p), nil
}

func (r *lineRing) add(l string) {
	r.lines = append(r.lines, r.redact(l))
	if len(r.lines) > r.max {
		r.lines = append(r.lines[:0:0], r.lines[len(r.lines)-r.max:]...)
	}
}

// Last returns up to n of the newest lines, the unterminated tail included.
func (r *lineRing) Last(n int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	all := r.lines
	if r.partial != "" {
		all = append(all[:len(all):len(all)], r.redact(r.partial))
	}
	if n <= 0 || n > len(all) {
		n = len(all)
	}
	return append([]string(nil), all[len(all)-n:]...)
}

// Accept implements testcontainers.LogConsumer: container output goes into
// the ring.
func (r *lineRing) Accept(l testcontainers.Log) { _, _ = r.Write(l.Content) }

// redactLogger passes testcontainers' own messages to the settings' log
// with secrets redacted.
type redactLogger struct{ s settings }

// Printf implements testcontainers' log.Logger.
func (l redactLogger) Printf(format string, v ...any) {
	l.s.logf("testcontainers: "+format, v...)
}

// closeOnce runs a server's close once and keeps its error for every call.
type closeOnce struct {
	once sync.Once
	err  error
}

func (c *closeOnce) do(close func() error) error {
	c.once.Do(func() { c.err = close() })
	return c.err
}
