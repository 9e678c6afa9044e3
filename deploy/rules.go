package deploy

import (
	"github.com/vllmperf/vllmperf/internal/strictyaml"

	"fmt"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// RuleFile is a Prometheus rule file.
type RuleFile struct {
	// Path is the file the rules were read from.
	Path   string
	Groups []RuleGroup
}

// RuleGroup is one group of a rule file.
type RuleGroup struct {
	Name     string `yaml:"name"`
	Interval string `yaml:"interval,omitempty"`
	Limit    int    `yaml:"limit,omitempty"`
	Rules    []Rule `yaml:"rules"`
}

// Rule is a recording rule (Record set) or an alerting rule (Alert set).
type Rule struct {
	Record      string            `yaml:"record,omitempty"`
	Alert       string            `yaml:"alert,omitempty"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
	// Line is the rule's line in its file (not written back).
	Line int `yaml:"-"`
}

// Name is the rule's alert or recorded series name.
func (r Rule) Name() string {
	if r.Alert != "" {
		return r.Alert
	}
	return r.Record
}

// Where names the rule for messages: "file:line: alert X" or "record X".
func (r Rule) Where(path string) string {
	kind := "record"
	if r.Alert != "" {
		kind = "alert"
	}
	return fmt.Sprintf("%s:%d: %s %s", path, r.Line, kind, r.Name())
}

// Rules lists every rule of the file, in file order.
func (f *RuleFile) Rules() []Rule {
	var out []Rule
	for _, g := range f.Groups {
		out = append(out, g.Rules...)
	}
	return out
}

// FileError is a problem in a file, at a line (and column) when known.
type FileError = strictyaml.Error

// LoadRules reads a rule file strictly: an unknown key, a rule that is both
// or neither record and alert, or one without expr is an error at its line.
// Expressions are not parsed here (see ParseExpr).
func LoadRules(path string) (*RuleFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read rules: %w", err)
	}
	return ParseRules(path, data)
}

// ParseRules parses a rule file's contents; source names it in errors.
func ParseRules(source string, data []byte) (*RuleFile, error) {
	var f struct {
		Groups []RuleGroup `yaml:"groups"`
	}
	if err := strictyaml.Decode(source, data, &f,
		strictyaml.KeysHint("a rule has only record or alert, expr, for, labels and annotations; a group only name, interval, limit and rules"),
		strictyaml.EmptyHint("a rule file needs `groups:`")); err != nil {
		return nil, err
	}
	if len(f.Groups) == 0 {
		return nil, &FileError{File: source, Msg: "no rule groups: add `groups:` with at least one group"}
	}
	// Line numbers: the same document as nodes, groups[i].rules[j].
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &FileError{File: source, Msg: "invalid YAML: " + err.Error()}
	}
	for gi := range f.Groups {
		g := &f.Groups[gi]
		if g.Name == "" {
			return nil, &FileError{File: source, Line: nodeLine(&doc, "groups", gi), Msg: "group without a name: add `name:`"}
		}
		for ri := range g.Rules {
			r := &g.Rules[ri]
			r.Line = nodeLine(&doc, "groups", gi, "rules", ri)
			switch {
			case r.Record != "" && r.Alert != "":
				return nil, &FileError{File: source, Line: r.Line, Msg: fmt.Sprintf("rule sets both record %q and alert %q: keep one", r.Record, r.Alert)}
			case r.Record == "" && r.Alert == "":
				return nil, &FileError{File: source, Line: r.Line, Msg: "rule without record or alert: name the series (record:) or the alert (alert:)"}
			case strings.TrimSpace(r.Expr) == "":
				return nil, &FileError{File: source, Line: r.Line, Msg: fmt.Sprintf("%s has no expr", r.Name())}
			case r.Record != "" && r.For != "":
				return nil, &FileError{File: source, Line: r.Line, Msg: fmt.Sprintf("record %s has for:, which only alerts take", r.Record)}
			}
		}
	}
	return &RuleFile{Path: source, Groups: f.Groups}, nil
}

// nodeLine follows path (mapping keys and sequence indices) from a document
// node and returns the line of the node it reaches, or 0.
func nodeLine(doc *yaml.Node, path ...any) int {
	n := doc
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	for _, step := range path {
		switch s := step.(type) {
		case string:
			if n.Kind != yaml.MappingNode {
				return 0
			}
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == s {
					next = n.Content[i+1]
				}
			}
			if next == nil {
				return 0
			}
			n = next
		case int:
			if n.Kind != yaml.SequenceNode || s >= len(n.Content) {
				return 0
			}
			n = n.Content[s]
		}
	}
	return n.Line
}
