package scrape

import (
	"os"
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

// fixturePair parses two recorded expositions as scrapes one second
// apart, before then after. (ParseFile stamps a file with its modification
// time, which a fresh clone sets in checkout order: either may come first.)
func fixturePair(t testing.TB, before, after string) (*Snapshot, *Snapshot) {
	t.Helper()
	at := time.Unix(1_700_000_000, 0)
	parse := func(name string, at time.Time) *Snapshot {
		b, err := os.ReadFile(fixture(name))
		if err != nil {
			t.Fatal(err)
		}
		return mustParse(t, string(b), at)
	}
	return parse(before, at), parse(after, at.Add(time.Second))
}

// mustParse parses an inline exposition or stops the test.
func mustParse(t testing.TB, text string, at time.Time) *Snapshot {
	t.Helper()
	s, err := Parse(strings.NewReader(text), "inline", at)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, text)
	}
	return s
}
