package vllmsim

import (
	"encoding/json"

	"github.com/vllmperf/vllmperf/internal/vllmsim/schemadoc"
)

// Structured output: a chat request with response_format {"type":
// "json_schema"} or a forced tool call (tool_choice "required" or a named
// function) is guided. The simulator writes a JSON document that
// validates against the schema (the tool's parameters for a tool call),
// streams it a piece a token (a JSON punctuation mark, a number, or up to
// schemadoc's few characters of a string) and ends with EOS when it is complete,
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
	pieces, err := schemadoc.Pieces(s, seed)
	if err != nil {
		return nil, badRequest("response_format", "vllm-sim cannot build a document for this schema: %v", err)
	}
	return &guided{pieces: pieces, tool: tool}, nil
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
