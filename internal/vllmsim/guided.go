package vllmsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
)

// Structured output: a chat request with response_format {"type":
// "json_schema"} or a forced tool call (tool_choice "required" or a named
// function) is guided. The simulator writes a JSON document that
// validates against the schema (the tool's parameters for a tool call),
// streams it a piece a token (a JSON punctuation mark, a number, or up to
// pieceLen characters of a string) and ends with EOS when it is complete,
// as a grammar does; a max_tokens below its length cuts it ("length"), and
// the client sees JSON that does not parse. Each guided sequence costs
// --sim-guided-decoding-overhead per decode step (engine.Config).

// responseFormat is OpenAI's response_format.
type responseFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
	} `json:"json_schema"`
}

// toolSpec is one entry of tools.
type toolSpec struct {
	Type     string `json:"type"`
	Function struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// guidedFields are the request fields that ask for structured output.
type guidedFields struct {
	ResponseFormat *responseFormat `json:"response_format"`
	Tools          []toolSpec      `json:"tools"`
	ToolChoice     json.RawMessage `json:"tool_choice"`
}

// guided is a guided request's document, in the pieces it streams.
type guided struct {
	pieces []string
	// tool names the function of a tool call ("" for response_format).
	tool string
}

// pieceLen is the most characters of a string one output token carries.
const pieceLen = 4

// parseGuided reads the structured-output fields: nil when the request
// asks for none. seed varies the document's values between requests.
func parseGuided(f guidedFields, seed string) (*guided, *apiError) {
	schema, tool, aerr := guidedSchema(f)
	if aerr != nil || schema == nil {
		return nil, aerr
	}
	var s map[string]any
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, badRequest("response_format", "the JSON schema does not parse: %v", err)
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(seed))
	doc, err := instance(s, h.Sum64(), 0)
	if err != nil {
		return nil, badRequest("response_format", "vllm-sim cannot build a document for this schema: %v", err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, badRequest("response_format", "%v", err)
	}
	return &guided{pieces: split(string(b)), tool: tool}, nil
}

// guidedSchema picks the schema a request is guided by, and the tool's
// name for a tool call.
func guidedSchema(f guidedFields) (json.RawMessage, string, *apiError) {
	if rf := f.ResponseFormat; rf != nil && rf.Type == "json_schema" {
		if rf.JSONSchema == nil || len(rf.JSONSchema.Schema) == 0 {
			return nil, "", badRequest("response_format", "json_schema needs a schema")
		}
		return rf.JSONSchema.Schema, "", nil
	}
	var choice string
	var named struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	switch {
	case len(f.ToolChoice) == 0 || json.Unmarshal(f.ToolChoice, &choice) == nil && choice != "required":
		return nil, "", nil // auto or none: the model answers in text
	case choice == "required":
		if len(f.Tools) == 0 {
			return nil, "", badRequest("tool_choice", "tool_choice \"required\" needs tools")
		}
		return f.Tools[0].Function.Parameters, f.Tools[0].Function.Name, nil
	case json.Unmarshal(f.ToolChoice, &named) != nil:
		return nil, "", badRequest("tool_choice", "want \"auto\", \"none\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": …}}")
	}
	for _, t := range f.Tools {
		if t.Function.Name == named.Function.Name {
			return t.Function.Parameters, t.Function.Name, nil
		}
	}
	return nil, "", badRequest("tool_choice", "tool_choice names %q, which is not among tools", named.Function.Name)
}

// instance builds a value that validates against schema s: objects with
// every property, arrays of max(minItems, 1) items, the first enum or
// const, numbers within their bounds, strings of words.
func instance(s map[string]any, seed uint64, depth int) (any, error) {
	if depth > 16 {
		return nil, errors.New("schema nests deeper than 16 levels")
	}
	if _, ok := s["$ref"]; ok {
		return nil, errors.New("$ref is not supported")
	}
	if c, ok := s["const"]; ok {
		return c, nil
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[seed%uint64(len(e))], nil
	}
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := s[key].([]any); ok && len(alts) > 0 {
			if first, ok := alts[0].(map[string]any); ok {
				return instance(first, seed, depth+1)
			}
		}
	}
	typ, _ := s["type"].(string)
	if ts, ok := s["type"].([]any); ok && len(ts) > 0 {
		typ, _ = ts[0].(string)
	}
	return typed(typ, s, seed, depth)
}

// typed builds a value of one JSON type.
func typed(typ string, s map[string]any, seed uint64, depth int) (any, error) {
	num := func(def float64) float64 {
		lo, hasLo := s["minimum"].(float64)
		hi, hasHi := s["maximum"].(float64)
		switch {
		case hasLo && hasHi:
			return lo + float64(seed%uint64(hi-lo+1))
		case hasLo:
			return lo + float64(seed%10)
		case hasHi:
			return hi - float64(seed%10)
		}
		return def + float64(seed%100)
	}
	switch typ {
	case "object", "":
		props, _ := s["properties"].(map[string]any)
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make(map[string]any, len(keys))
		for i, k := range keys {
			sub, _ := props[k].(map[string]any)
			v, err := instance(sub, seed+uint64(i)*7919, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = v
		}
		return out, nil
	case "array":
		n := 1
		if m, ok := s["minItems"].(float64); ok && int(m) > n {
			n = int(m)
		}
		items, _ := s["items"].(map[string]any)
		out := make([]any, n)
		for i := range out {
			v, err := instance(items, seed+uint64(i)*104729, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case "string":
		return words(seed, s), nil
	case "integer":
		return int64(num(1)), nil
	case "number":
		return num(0.5), nil
	case "boolean":
		return seed%2 == 0, nil
	case "null":
		return nil, nil
	}
	return nil, fmt.Errorf("type %q is not supported", typ)
}

// words is a string of output words within the schema's length bounds.
func words(seed uint64, s map[string]any) string {
	lo, hi := 1.0, 24.0
	if v, ok := s["minLength"].(float64); ok {
		lo = v
	}
	if v, ok := s["maxLength"].(float64); ok {
		hi = v
	}
	var b strings.Builder
	for k := uint64(0); float64(b.Len()) < lo || k < 2; k++ {
		w := outputWords[(seed+k*31)%uint64(len(outputWords))]
		if float64(b.Len()+len(w)+1) > hi {
			break
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	for float64(b.Len()) < lo {
		b.WriteByte('x')
	}
	return b.String()
}

// split cuts a JSON document into the pieces streamed one a token: each
// string's characters pieceLen at a time, everything else a character
// run between them.
func split(doc string) []string {
	var out []string
	inString, cur := false, ""
	flush := func() {
		if cur != "" {
			out = append(out, cur)
			cur = ""
		}
	}
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		cur += string(c)
		switch {
		case c == '\\' && inString && i+1 < len(doc):
			i++
			cur += string(doc[i])
		case c == '"':
			inString = !inString
			if !inString {
				flush()
			}
		case inString && len(cur) >= pieceLen:
			flush()
		case !inString && strings.ContainsRune("{}[],:", rune(c)):
			flush()
		}
	}
	flush()
	return out
}
