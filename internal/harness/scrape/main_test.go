package scrape

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fixture returns the path of a recorded exposition in fixtures/metrics.
func fixture(name string) string {
	return filepath.Join("..", "..", "..", "fixtures", "metrics", name)
}

// mustParseFile parses a fixture or stops the test.
func mustParseFile(t *testing.T, name string) *Snapshot {
	t.Helper()
	s, err := ParseFile(fixture(name))
	if err != nil {
		t.Fatalf("ParseFile(%s): %v", name, err)
	}
	return s
}

// mustParse parses an inline exposition or stops the test.
func mustParse(t *testing.T, text string, at time.Time) *Snapshot {
	t.Helper()
	s, err := Parse(strings.NewReader(text), "inline", at)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, text)
	}
	return s
}
