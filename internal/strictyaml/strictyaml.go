// Package strictyaml decodes the project's YAML files (scenarios,
// thresholds) strictly: an unknown key, a wrong type or a value a custom
// type refuses is an *Error that names the file, line and column and says
// how to fix it. It wraps go.yaml.in/yaml/v3 with KnownFields(true).
package strictyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/vllmperf/vllmperf/internal/suggest"
)

// Error is a problem in a YAML file, located where known.
type Error struct {
	File string // the file (or a name for embedded data)
	Line int    // 1-based; 0 when the whole file is at fault
	Col  int    // 1-based; 0 when unknown
	Msg  string // what is wrong and how to fix it
}

func (e *Error) Error() string {
	switch {
	case e.Line > 0 && e.Col > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	default:
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
}

// At returns an *Error located at n in source.
func At(source string, n *yaml.Node, format string, args ...any) *Error {
	e := &Error{File: source, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	return e
}

// nodeError is what a custom UnmarshalYAML returns to place its message at
// a node; Decode turns it into an *Error with the file name.
type nodeError struct {
	line, col int
	msg       string
}

func (e *nodeError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// Errorf is for custom types' UnmarshalYAML methods: the message is placed
// at n's line and column in the file being decoded.
func Errorf(n *yaml.Node, format string, args ...any) error {
	return &nodeError{line: n.Line, col: n.Column, msg: fmt.Sprintf(format, args...)}
}

// Option adjusts Decode.
type Option func(*options)

type options struct {
	allowEmpty bool
	keysHint   string
	emptyHint  string
}

// AllowEmpty accepts an empty document (v keeps its zero value).
func AllowEmpty() Option { return func(o *options) { o.allowEmpty = true } }

// KeysHint replaces the generic advice after an unknown key with one that
// says which keys the file has ("a profile has only name, ...").
func KeysHint(hint string) Option { return func(o *options) { o.keysHint = hint } }

// EmptyHint replaces "the file is empty" with advice on what it needs.
func EmptyHint(hint string) Option { return func(o *options) { o.emptyHint = hint } }

// Decode decodes data (the whole of source) into v strictly. An empty
// document is an error unless AllowEmpty.
//
// A type with its own UnmarshalYAML must be a leaf: yaml.v3 does not apply
// KnownFields below a custom unmarshaler, so a struct with one would take
// unknown keys silently.
func Decode(source string, data []byte, v any, opts ...Option) error {
	_, err := DecodeNode(source, data, v, opts...)
	return err
}

// DecodeNode is Decode that also returns the document's root node, for
// positions of later messages (see Lookup). The node is nil for an empty
// document.
func DecodeNode(source string, data []byte, v any, opts ...Option) (*yaml.Node, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, syntaxError(source, err)
	}
	if err := decode(source, data, &root, v, o); err != nil {
		return nil, err
	}
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		return root.Content[0], nil
	}
	return nil, nil
}

// Lookup returns the value node of key in mapping n, or nil.
func Lookup(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func decode(source string, data []byte, root *yaml.Node, v any, o options) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(v)
	if errors.Is(err, io.EOF) {
		switch {
		case o.allowEmpty:
			return nil
		case o.emptyHint != "":
			return &Error{File: source, Msg: "the file is empty: " + o.emptyHint}
		}
		return &Error{File: source, Msg: "the file is empty"}
	}
	if err == nil {
		return nil
	}
	var ne *nodeError
	if errors.As(err, &ne) {
		return &Error{File: source, Line: ne.line, Col: ne.col, Msg: ne.msg}
	}
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		return typeError(source, root, te.Errors[0], keysOf(reflect.TypeOf(v)), o.keysHint)
	}
	return syntaxError(source, err)
}

var (
	linePrefix = regexp.MustCompile(`^line (\d+): (.*)$`)
	unknownKey = regexp.MustCompile(`^field (\S+) not found in type`)
	cannotDo   = regexp.MustCompile(`^cannot unmarshal !!(\w+) ` + "`" + `([^` + "`" + `]*)` + "`" + ` into (\S+)$`)
	// cannotShape is yaml.v3's message for a list or mapping where
	// another shape belongs; it quotes no value.
	cannotShape = regexp.MustCompile(`^cannot unmarshal !!(seq|map) into (.+)$`)
)

// typeError locates one of yaml.v3's type errors ("line N: ...") and words
// it for a person.
func typeError(source string, root *yaml.Node, msg string, keys []string, hint string) error {
	e := &Error{File: source, Msg: msg}
	if m := linePrefix.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = m[2]
	}
	if m := unknownKey.FindStringSubmatch(e.Msg); m != nil {
		name := m[1]
		e.Col = keyColumn(root, name, e.Line)
		e.Msg = fmt.Sprintf("unknown key %q", name)
		if s := suggest.Closest(name, keys); s != "" && s != name {
			e.Msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		if hint == "" {
			hint = "the comments at the top of the file list the keys"
		}
		e.Msg += "; " + hint
		return e
	}
	if m := cannotDo.FindStringSubmatch(e.Msg); m != nil {
		e.Col = valueColumn(root, m[2], e.Line)
		e.Msg = fmt.Sprintf("%q is a %s where %s is expected", m[2], m[1], goTypeWord(m[3]))
	}
	if m := cannotShape.FindStringSubmatch(e.Msg); m != nil {
		given, kind := "a list", yaml.SequenceNode
		if m[1] == "map" {
			given, kind = "a mapping", yaml.MappingNode
		}
		e.Col = kindColumn(root, kind, e.Line)
		e.Msg = fmt.Sprintf("%s is given where %s is expected", given, shapeWord(m[2]))
	}
	return e
}

// shapeWord names the shape a Go type takes in YAML, for a list or a
// mapping given in its place.
func shapeWord(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["), strings.HasPrefix(t, "struct"), strings.Contains(t, "."):
		return "a mapping" // a map, or a struct of keys
	default:
		return goTypeWord(t) // a scalar
	}
}

// goTypeWord names a Go type as a YAML user reads it.
func goTypeWord(t string) string {
	switch {
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "a whole number"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "bool":
		return "true or false"
	case t == "string":
		return "a string"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["):
		return "a mapping"
	default:
		return "a " + t
	}
}

// syntaxError words a YAML syntax error.
func syntaxError(source string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	e := &Error{File: source, Msg: "invalid YAML: " + msg}
	if m := linePrefix.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = "invalid YAML: " + m[2]
	}
	return e
}

// keyColumn finds the column of mapping key name on line, or 0.
func keyColumn(n *yaml.Node, name string, line int) int {
	if n == nil {
		return 0
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Value == name && k.Line == line {
				return k.Column
			}
		}
	}
	for _, c := range n.Content {
		if col := keyColumn(c, name, line); col > 0 {
			return col
		}
	}
	return 0
}

// kindColumn finds the column of the first node of kind that starts on
// line, or 0.
func kindColumn(n *yaml.Node, kind yaml.Kind, line int) int {
	if n == nil {
		return 0
	}
	if n.Kind == kind && n.Line == line {
		return n.Column
	}
	for _, c := range n.Content {
		if col := kindColumn(c, kind, line); col > 0 {
			return col
		}
	}
	return 0
}

// valueColumn finds the column of scalar value on line, or 0.
func valueColumn(n *yaml.Node, value string, line int) int {
	if n == nil {
		return 0
	}
	if n.Kind == yaml.ScalarNode && n.Line == line && n.Value == value {
		return n.Column
	}
	for _, c := range n.Content {
		if col := valueColumn(c, value, line); col > 0 {
			return col
		}
	}
	return 0
}

// keysOf lists every yaml key of t and the types inside it, for did-you-mean.
func keysOf(t reflect.Type) []string {
	seen := map[reflect.Type]bool{}
	var keys []string
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name != "" && name != "-" {
				keys = append(keys, name)
			}
			walk(f.Type)
		}
	}
	if t != nil {
		walk(t)
	}
	return keys
}
