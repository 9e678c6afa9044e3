package openai

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// appendStructured adds a structured-output request's fields to a JSON
// body being built: response_format with the schema, or the one tool the
// model must call (tools and tool_choice naming it).
func appendStructured(out []byte, req *Request) []byte {
	if req.Schema == nil {
		return out
	}
	raw := compact(req.Schema.Raw())
	if req.Tool == "" {
		out = append(out, `,"response_format":{"type":"json_schema","json_schema":{"name":"output","schema":`...)
		out = append(out, raw...)
		return append(out, `}}`...)
	}
	name := strconv.Quote(req.Tool)
	out = append(out, `,"tools":[{"type":"function","function":{"name":`...)
	out = append(out, name...)
	out = append(out, `,"parameters":`...)
	out = append(out, raw...)
	out = append(out, `}}],"tool_choice":{"type":"function","function":{"name":`...)
	out = append(out, name...)
	return append(out, `}}`...)
}

// compact strips a JSON value's insignificant white space (the schema
// comes from a file).
func compact(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// toolArgument is set when a chunk's delta carries a tool call with a
// non-empty piece of arguments (or a function name): content, for TTFT.
type toolArgument bool

// UnmarshalJSON implements json.Unmarshaler.
func (t *toolArgument) UnmarshalJSON(b []byte) error {
	var calls []struct {
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	*t = false
	if json.Unmarshal(b, &calls) != nil {
		return nil
	}
	for _, c := range calls {
		if c.Function.Arguments != "" || c.Function.Name != "" {
			*t = true
		}
	}
	return nil
}
