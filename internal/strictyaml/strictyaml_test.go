package strictyaml

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// level is a leaf type with its own UnmarshalYAML, as the project's
// custom types (rates, durations) are.
type level int

func (l *level) UnmarshalYAML(n *yaml.Node) error {
	switch n.Value {
	case "low":
		*l = 1
	case "high":
		*l = 2
	default:
		return Errorf(n, "level %q: want low or high", n.Value)
	}
	return nil
}

// config is the shape the fixtures are decoded into: every kind of value.
type config struct {
	Name    string             `yaml:"name"`
	Count   int                `yaml:"count"`
	Ratio   float64            `yaml:"ratio"`
	Enabled bool               `yaml:"enabled"`
	Tags    []string           `yaml:"tags"`
	Limits  map[string]float64 `yaml:"limits"`
	Inner   struct {
		Depth int    `yaml:"depth"`
		Mode  string `yaml:"mode"`
	} `yaml:"inner"`
	Level level `yaml:"level"`
}

// TestDecodeValid decodes a file with every key.
func TestDecodeValid(t *testing.T) {
	t.Parallel()
	path := filepath.Join("testdata", "valid.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c config
	root, err := DecodeNode(path, data, &c)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "ok" || c.Count != 3 || c.Ratio != 0.5 || !c.Enabled || len(c.Tags) != 2 || c.Limits["ttft"] != 2 ||
		c.Inner.Depth != 2 || c.Inner.Mode != "fast" || c.Level != 2 {
		t.Errorf("decoded %+v", c)
	}
	inner := Lookup(root, "inner")
	if inner == nil || inner.Line != 9 {
		t.Fatalf("Lookup(inner) = %v, want the mapping on line 9", inner)
	}
	if n := Lookup(inner, "mode"); n == nil || n.Value != "fast" || n.Line != 10 || n.Column != 9 {
		t.Errorf("Lookup(mode) = %+v, want fast at 10:9", n)
	}
	if Lookup(root, "nothing") != nil || Lookup(nil, "name") != nil || Lookup(Lookup(root, "name"), "x") != nil {
		t.Error("Lookup of a missing key, a nil node or a scalar is not nil")
	}
	if e := At(path, Lookup(root, "count"), "count %d: too many", 3); e.Error() != path+":3:8: count 3: too many" {
		t.Errorf("At = %q", e)
	}
	if e := At(path, nil, "no place"); e.Error() != path+": no place" {
		t.Errorf("At(nil) = %q", e)
	}
}

// TestDecodeErrors: each fixture holds one mistake; the error is an
// *Error at the file, line and column of it, worded for a person.
func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file string
		opts []Option
		want string // the whole message, after the fixture's path
	}{
		// A misspelt key: where, and the key it resembles.
		{"unknown-key.yaml", nil, `:2:1: unknown key "cuont" (did you mean "count"?); the comments at the top of the file list the keys`},
		// ... in a nested mapping, suggested from the nested struct's keys.
		{"unknown-nested-key.yaml", nil, `:4:3: unknown key "mdoe" (did you mean "mode"?); the comments at the top of the file list the keys`},
		// ... with the file's own hint instead of the generic one.
		{"unknown-key.yaml", []Option{KeysHint("a config has name, count and ratio")}, `:2:1: unknown key "cuont" (did you mean "count"?); a config has name, count and ratio`},
		// ... and no suggestion when nothing is close.
		{"unknown-key-no-suggestion.yaml", nil, `:2:1: unknown key "zzzzzz"; the comments at the top of the file list the keys`},
		// A string where a whole number is expected.
		{"not-int.yaml", nil, `:2:8: "three" is a str where a whole number is expected`},
		// ... a number, true or false, a list, a mapping.
		{"not-float.yaml", nil, `:2:8: "half" is a str where a number is expected`},
		{"not-bool.yaml", nil, `:2:10: "maybe" is a str where true or false is expected`},
		{"not-list.yaml", nil, `:2:7: "a" is a str where a list is expected`},
		{"not-mapping.yaml", nil, `:2:9: a list is given where a mapping is expected`},
		{"mapping-for-list.yaml", nil, `:2:7: a mapping is given where a list is expected`},
		{"list-for-struct.yaml", nil, `:3:3: a list is given where a mapping is expected`},
		// ... in a nested mapping.
		{"nested-not-int.yaml", nil, `:3:10: "deep" is a str where a whole number is expected`},
		// A custom type's refusal, placed at its value.
		{"custom-refused.yaml", nil, `:2:8: level "medium": want low or high`},
		// Broken syntax, at the line yaml.v3 gives. For a list or
		// mapping left open that is the line before it (yaml.v3 counts
		// that line from 0); the message says what is missing.
		{"syntax.yaml", nil, `:1: invalid YAML: did not find expected ',' or ']'`},
		// ... a key among a block list's items: the line before the list.
		{"block-misaligned.yaml", nil, `:2: invalid YAML: did not find expected '-' indicator`},
		// ... a tab in the indentation.
		{"tab.yaml", nil, `:2: invalid YAML: found a tab character that violates indentation`},
		// A key written twice.
		{"duplicate-key.yaml", nil, `:2: mapping key "name" already defined at line 1`},
		// A list where the file is a mapping.
		{"top-level-list.yaml", nil, `:1:1: a list is given where a mapping is expected`},
		// An empty file, with and without the file's own advice.
		{"empty.yaml", nil, `: the file is empty`},
		{"comment-only.yaml", nil, `: the file is empty`},
		{"empty.yaml", []Option{EmptyHint("a config needs at least `name:`")}, ": the file is empty: a config needs at least `name:`"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("testdata", tc.file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var c config
			err = Decode(path, data, &c, tc.opts...)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v, want a *strictyaml.Error", err, err)
			}
			if e.File != path {
				t.Errorf("File = %q, want %q", e.File, path)
			}
			if got := err.Error(); !strings.HasPrefix(got, path+tc.want) {
				t.Errorf("error\n got %s\nwant %s", got, path+tc.want)
			}
		})
	}
}

// TestAllowEmpty: an empty document keeps the zero value when allowed.
func TestAllowEmpty(t *testing.T) {
	t.Parallel()
	for _, file := range []string{"empty.yaml", "comment-only.yaml"} {
		c := config{Name: "kept"}
		root, err := DecodeNode(file, mustRead(t, file), &c, AllowEmpty())
		if err != nil || c.Name != "kept" || root != nil {
			t.Errorf("%s: root %v, %+v, %v; want nil, the value untouched, no error", file, root, c, err)
		}
	}
}

func mustRead(t *testing.T, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
