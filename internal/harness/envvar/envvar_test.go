package envvar_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/harness/envvar"
	"github.com/vllmperf/vllmperf/internal/harness/server"
)

func TestSettingsDeclaredOnce(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, s := range envvar.All() {
		if !strings.HasPrefix(s.Name, "VLLMPERF_") || strings.TrimSpace(s.Doc) == "" {
			t.Errorf("%+v: want a VLLMPERF_ name and a doc", s)
		}
		if seen[s.Name] {
			t.Errorf("%s is declared twice", s.Name)
		}
		seen[s.Name] = true
	}
	if got, want := envvar.Backend.Default, string(server.KindSim); got != want {
		t.Errorf("VLLMPERF_BACKEND defaults to %q in envvar, %q in server", got, want)
	}
}

func TestGetAndLookup(t *testing.T) {
	s := envvar.Setting{Name: "VLLMPERF_TEST_ENVVAR", Default: "full"}
	for _, tt := range []struct {
		name, value, get string
		set              bool
	}{
		{"unset: the default", "", "full", false},
		{"blank is unset", "  ", "full", false},
		{"set, trimmed", " quick ", "quick", true},
	} {
		t.Setenv(s.Name, tt.value)
		v, ok := s.Lookup()
		if got := s.Get(); got != tt.get || ok != tt.set || (ok && v != tt.get) {
			t.Errorf("%s: Get() = %q, Lookup() = %q, %v; want %q, set %v", tt.name, got, v, ok, tt.get, tt.set)
		}
	}
}

// TestMakefileSuiteDefaults holds the Makefile's SUITE_DEFAULTS (what make
// bench and make baseline unset) to the settings marked Suite.
func TestMakefileSuiteDefaults(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^SUITE_DEFAULTS :=((?:.*\\\n)*.*)$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("Makefile: no SUITE_DEFAULTS := line")
	}
	var got []string
	for _, u := range regexp.MustCompile(`-u\s+(\S+)`).FindAllSubmatch(m[1], -1) {
		got = append(got, string(u[1]))
	}
	var want []string
	for _, s := range envvar.All() {
		if s.Suite {
			want = append(want, s.Name)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("Makefile's SUITE_DEFAULTS unsets %v; the settings marked Suite (package envvar) are %v: make them agree", got, want)
	}
}
