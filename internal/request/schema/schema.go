// Package schema checks structured output: a JSON schema, compiled once
// (github.com/santhosh-tekuri/jsonschema/v6, draft 2020-12 by default),
// and the text a server generated for it, which must parse as JSON and
// validate against it.
package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is a compiled JSON schema with its source.
type Schema struct {
	raw      json.RawMessage
	compiled *jsonschema.Schema
}

// Compile compiles a JSON schema; name names it in errors.
func Compile(name string, raw json.RawMessage) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema %s: not JSON: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	loc := "mem://schema/" + url.PathEscape(name) + ".json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return &Schema{raw: raw, compiled: s}, nil
}

// Raw is the schema's JSON, as sent to the server.
func (s *Schema) Raw() json.RawMessage { return s.raw }

// Check reports why text is not a JSON document valid against s (nil
// when it is).
func (s *Schema) Check(text string) error {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return fmt.Errorf("the output is not JSON (%v): %q", err, clip(text))
	}
	if err := s.compiled.Validate(doc); err != nil {
		return fmt.Errorf("the output does not match the schema: %v", oneLine(err))
	}
	return nil
}

// oneLine flattens a validation error's tree to one line.
func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// clip shortens text for a message.
func clip(text string) string {
	if len(text) > 80 {
		return text[:80] + "…"
	}
	return text
}

// cache holds compiled schemas by their JSON (Cached).
var cache sync.Map

// Cached compiles raw once per process and returns it.
func Cached(raw json.RawMessage) (*Schema, error) {
	if s, ok := cache.Load(string(raw)); ok {
		return s.(*Schema), nil
	}
	s, err := Compile("request", raw)
	if err != nil {
		return nil, err
	}
	cache.Store(string(raw), s)
	return s, nil
}
