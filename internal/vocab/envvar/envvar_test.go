package envvar_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/docfigures"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

func TestSettingsDeclaredOnce(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, s := range envvar.All() {
		if !strings.HasPrefix(s.Name, "VLLMPERF_") || strings.TrimSpace(s.Doc) == "" || strings.Contains(s.Doc, "|") {
			t.Errorf("%+v: want a VLLMPERF_ name and a doc without |", s)
		}
		if strings.HasPrefix(s.Old, "VLLMPERF_") {
			t.Errorf("%s: its old name %s has the prefix already: an old name is one from before it", s.Name, s.Old)
		}
		for _, n := range []string{s.Name, s.Old} {
			if n != "" && seen[n] {
				t.Errorf("%s is declared twice (as a name or an old name)", n)
			}
			seen[n] = true
		}
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

// TestOldName: a setting that had a name before the VLLMPERF_ prefix
// reads its new name, else its old one; reading the old name, or finding
// both (the new one wins), warns once on stderr naming the new name.
func TestOldName(t *testing.T) {
	s := envvar.Setting{Name: "VLLMPERF_TEST_NEWNAME", Old: "TEST_OLDNAME", Default: "10"}
	for _, tt := range []struct {
		name, new, old string
		get            string
		set            bool
		warn           string // "" for no warning
		intErr         string // Int(1)'s error, naming the variable read
	}{
		{name: "neither: the default", get: "10"},
		{name: "new name only", new: "4", get: "4", set: true},
		{name: "old name only: read, with a warning", old: "5", get: "5", set: true,
			warn: "warning: TEST_OLDNAME is the old name of VLLMPERF_TEST_NEWNAME: read for now, but set VLLMPERF_TEST_NEWNAME instead\n"},
		{name: "both: the new name wins, with a warning", new: "4", old: "5", get: "4", set: true,
			warn: "warning: VLLMPERF_TEST_NEWNAME and TEST_OLDNAME are both set: VLLMPERF_TEST_NEWNAME=\"4\" wins, the old name is ignored; unset TEST_OLDNAME\n"},
		{name: "new blank: the old one is read", new: " ", old: "5", get: "5", set: true,
			warn: "warning: TEST_OLDNAME is the old name of VLLMPERF_TEST_NEWNAME"},
		{name: "old blank: no warning", new: "4", old: "  ", get: "4", set: true},
		{name: "a bad old value names the old variable", old: "zero", get: "zero", set: true,
			warn: "TEST_OLDNAME is the old name", intErr: `TEST_OLDNAME="zero": want a whole number`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			warned := envvar.CaptureWarnings(t)
			t.Setenv(s.Name, tt.new)
			t.Setenv(s.Old, tt.old)
			v, ok := s.Lookup()
			if got := s.Get(); got != tt.get || ok != tt.set || (ok && v != tt.get) {
				t.Errorf("Get() = %q, Lookup() = %q, %v; want %q, set %v", got, v, ok, tt.get, tt.set)
			}
			_, err := s.Int(1)
			switch {
			case tt.intErr == "" && err != nil:
				t.Errorf("Int(1): %v", err)
			case tt.intErr != "" && (err == nil || !strings.Contains(err.Error(), tt.intErr)):
				t.Errorf("Int(1) error = %v, want one with %q", err, tt.intErr)
			}
			got := warned.String()
			switch {
			case tt.warn == "" && got != "":
				t.Errorf("warned %q, want nothing", got)
			case tt.warn != "" && !strings.Contains(got, tt.warn):
				t.Errorf("warned %q, want %q", got, tt.warn)
			case strings.Count(got, "\n") > 1:
				t.Errorf("warned %q: want one line however often the setting is read", got)
			}
		})
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

// TestParse: Int, Duration and Bool read the value or the default, and
// refuse anything else naming the variable, the value and what to write.
func TestParse(t *testing.T) {
	const name = "VLLMPERF_TEST_ENVVAR"
	for _, tt := range []struct {
		name, value, def string
		parse            func(envvar.Setting) (any, error)
		want             any
		err              string
	}{
		// A count: the default when unset, the value when set.
		{"int default", "", "10", func(s envvar.Setting) (any, error) { return s.Int(1) }, 10, ""},
		{"int set", " 3 ", "10", func(s envvar.Setting) (any, error) { return s.Int(1) }, 3, ""},
		// Below the minimum, or no number.
		{"int too small", "0", "10", func(s envvar.Setting) (any, error) { return s.Int(1) }, 0, `VLLMPERF_TEST_ENVVAR="0": want a whole number of at least 1`},
		{"int word", "ten", "", func(s envvar.Setting) (any, error) { return s.Int(1) }, 0, `VLLMPERF_TEST_ENVVAR="ten": want a whole number`},
		// A duration: unset is 0 (none), set is parsed.
		{"duration unset", "", "", func(s envvar.Setting) (any, error) { return s.Duration() }, time.Duration(0), ""},
		{"duration set", "2h", "", func(s envvar.Setting) (any, error) { return s.Duration() }, 2 * time.Hour, ""},
		// Not positive, or no unit.
		{"duration negative", "-1h", "", func(s envvar.Setting) (any, error) { return s.Duration() }, time.Duration(0), `VLLMPERF_TEST_ENVVAR="-1h": want a Go duration such as 2h or 45m`},
		{"duration no unit", "3", "", func(s envvar.Setting) (any, error) { return s.Duration() }, time.Duration(0), `want a Go duration`},
		// A switch: ParseBool's spellings; a typo is an error, not false.
		{"bool default", "", "false", func(s envvar.Setting) (any, error) { return s.Bool() }, false, ""},
		{"bool true", "true", "false", func(s envvar.Setting) (any, error) { return s.Bool() }, true, ""},
		{"bool 1", "1", "false", func(s envvar.Setting) (any, error) { return s.Bool() }, true, ""},
		{"bool typo", "yes", "false", func(s envvar.Setting) (any, error) { return s.Bool() }, false, `VLLMPERF_TEST_ENVVAR="yes": want true or false`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(name, tt.value)
			got, err := tt.parse(envvar.Setting{Name: name, Default: tt.def})
			switch {
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("err = %v, want one with %q", err, tt.err)
			case tt.err == "" && (err != nil || got != tt.want):
				t.Errorf("= %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// TestFiguresSettings: docs/settings.md's table is All, rendered; a
// setting declared is documented there (make figures rewrites it).
func TestFiguresSettings(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("\n| variable | default | what it sets | make bench resets it |\n| --- | --- | --- | --- |\n")
	for _, s := range envvar.All() {
		def, reset := "", ""
		if s.Default != "" {
			def = "`" + s.Default + "`"
		}
		if s.Suite {
			reset = "yes"
		}
		doc := s.Doc
		if f := s.Formerly(); f != "" {
			doc += " (" + f + ")"
		}
		doc = strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(doc) // results/<UTC timestamp> is no HTML tag
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", s.Name, def, doc, reset)
	}
	docfigures.Sync(t, "docs/settings.md", "settings", b.String())
}

// TestDocumentedSettingsDeclared: every vllmperf setting a docs table
// lists (a row whose first cell names VLLMPERF_* or PERF_GATE_*) is
// declared here; third-party names (HF_TOKEN) are their owner's.
func TestDocumentedSettingsDeclared(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..", "..")
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"), filepath.Join(root, "CONTRIBUTING.md"), filepath.Join(root, "scenarios", "README.md"))
	declared := map[string]bool{}
	for _, s := range envvar.All() {
		declared[s.Name] = true
	}
	name := regexp.MustCompile("`((?:VLLMPERF|PERF_GATE)_[A-Z0-9_]+)`")
	seen := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			cells := strings.Split(line, "|")
			if !strings.HasPrefix(line, "| `") || len(cells) < 3 {
				continue
			}
			for _, m := range name.FindAllStringSubmatch(cells[1], -1) {
				seen++
				if !declared[m[1]] {
					t.Errorf("%s:%d documents %s, which package envvar does not declare: declare it there (name, default, doc), or drop it from the table", f, i+1, m[1])
				}
			}
		}
	}
	if seen == 0 {
		t.Error("no settings table found in docs/: the check reads nothing")
	}
}
