package deploy_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/deploy"
)

func TestLoadRules(t *testing.T) {
	t.Parallel()
	f, err := deploy.LoadRules(filepath.Join("testdata", "rules", "good.yml"))
	if err != nil {
		t.Fatal(err)
	}
	rules := f.Rules()
	if got, want := len(rules), 2; got != want {
		t.Fatalf("got %d rules, want %d", got, want)
	}
	for i, want := range []struct {
		name string
		line int
		for_ string
	}{
		{"job:up:sum", 4, ""},
		{"Down", 6, "1m"},
	} {
		r := rules[i]
		if r.Name() != want.name || r.Line != want.line || r.For != want.for_ {
			t.Errorf("rule %d: got %s at line %d for %q, want %s at line %d for %q", i, r.Name(), r.Line, r.For, want.name, want.line, want.for_)
		}
	}
	if got, want := rules[1].Where(f.Path), "testdata/rules/good.yml:6: alert Down"; got != want {
		t.Errorf("Where: got %q, want %q", got, want)
	}
}

func TestLoadRulesErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file string
		line int
		want string
	}{
		// A misspelt key is named, with the keys a rule has.
		{"unknown-key.yml", 5, `unknown key "expression"; a rule has only record or alert, expr, for, labels and annotations`},
		// A rule is a recording rule or an alert, not both.
		{"both-kinds.yml", 6, `rule sets both record "job:up:min" and alert "Down": keep one`},
		// ... and not neither.
		{"neither-kind.yml", 4, "rule without record or alert"},
		// An alert without expr.
		{"no-expr.yml", 4, "Down has no expr"},
		// for: belongs to alerts.
		{"for-on-record.yml", 4, "record job:up:sum has for:, which only alerts take"},
		// Groups are named.
		{"no-group-name.yml", 2, "group without a name"},
		// An empty file.
		{"empty.yml", 0, "the file is empty: a rule file needs `groups:`"},
		// A file without groups.
		{"no-groups.yml", 0, "no rule groups"},
		// Broken indentation is a YAML error at the line of the block the
		// parser was in (yaml.v3 names the rules list, line 3).
		{"bad-yaml.yml", 3, "invalid YAML"},
		// A value of the wrong type.
		{"wrong-type.yml", 6, "a list is given where a mapping is expected"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("testdata", "rules", tc.file)
			_, err := deploy.LoadRules(path)
			var fe *deploy.FileError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, want a *deploy.FileError", err)
			}
			if fe.File != path || fe.Line != tc.line || !strings.Contains(fe.Msg, tc.want) {
				t.Errorf("got %q (line %d), want line %d containing %q", err, fe.Line, tc.line, tc.want)
			}
		})
	}
}

func TestLoadRulesMissingFile(t *testing.T) {
	t.Parallel()
	if _, err := deploy.LoadRules(filepath.Join("testdata", "rules", "absent.yml")); err == nil || !strings.Contains(err.Error(), "absent.yml") {
		t.Errorf("got %v, want an error naming the file", err)
	}
}
