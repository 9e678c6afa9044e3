package envvar

import (
	"bytes"
	"os"
	"testing"
)

// CaptureWarnings sends the old names' warnings to a buffer, each to be
// said again, until the test ends; the test must not run in parallel.
func CaptureWarnings(t *testing.T) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	warned.Lock()
	warned.to, warned.said = &b, map[string]bool{}
	warned.Unlock()
	t.Cleanup(func() {
		warned.Lock()
		warned.to, warned.said = os.Stderr, map[string]bool{}
		warned.Unlock()
	})
	return &b
}
