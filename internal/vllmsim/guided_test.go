package vllmsim

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/schema"
)

// guidedText collects a guided stream's text: content, or tool-call
// arguments with the function's name, and the finish reason.
func guidedText(t *testing.T, res streamResult) (text, tool, finish string) {
	t.Helper()
	for _, e := range res.events {
		var c struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(e.data), &c); err != nil {
			t.Fatal(err)
		}
		for _, ch := range c.Choices {
			text += ch.Delta.Content
			for _, tc := range ch.Delta.ToolCalls {
				text += tc.Function.Arguments
				tool += tc.Function.Name
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	return text, tool, finish
}

func fixtureSchema(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../fixtures/schemas/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestGuidedOutput: a response_format json_schema request and a forced
// tool call stream documents that validate against their schemas and end
// with "stop"; a max_tokens below the document's length cuts it.
func TestGuidedOutput(t *testing.T) {
	t.Parallel()
	m := startSim(t)
	person, weather := fixtureSchema(t, "person"), fixtureSchema(t, "get_weather")
	msg := `"messages":[{"role":"user","content":"tell me"}],"stream":true,"stream_options":{"include_usage":true}`
	for _, tc := range []struct {
		name, body, schema, tool, finish string
		valid                            bool
	}{
		{"json_schema", `{` + msg + `,"max_tokens":300,"response_format":{"type":"json_schema","json_schema":{"name":"p","schema":` + person + `}}}`, person, "", "stop", true},
		{"named tool", `{` + msg + `,"max_tokens":300,"tools":[{"type":"function","function":{"name":"get_weather","parameters":` + weather + `}}],"tool_choice":{"type":"function","function":{"name":"get_weather"}}}`, weather, "get_weather", "stop", true},
		{"required tool", `{` + msg + `,"max_tokens":300,"tools":[{"type":"function","function":{"name":"get_weather","parameters":` + weather + `}}],"tool_choice":"required"}`, weather, "get_weather", "stop", true},
		{"cut by max_tokens", `{` + msg + `,"max_tokens":5,"response_format":{"type":"json_schema","json_schema":{"name":"p","schema":` + person + `}}}`, person, "", "length", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := m.stream(t, context.Background(), "/v1/chat/completions", tc.body)
			if res.status != 200 || res.err != nil || !res.done {
				t.Fatalf("status %d, err %v, done %v", res.status, res.err, res.done)
			}
			text, tool, finish := guidedText(t, res)
			s, err := schema.Compile(tc.name, json.RawMessage(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Check(text); (err == nil) != tc.valid {
				t.Errorf("text %q: check = %v, want valid %v", text, err, tc.valid)
			}
			if tool != tc.tool || finish != tc.finish {
				t.Errorf("tool %q finish %q, want %q and %q", tool, finish, tc.tool, tc.finish)
			}
		})
	}
	code, b := m.post(t, "/v1/chat/completions", `{`+msg+`,"response_format":{"type":"json_schema","json_schema":{"name":"p","schema":{"$ref":"#/x"}}}}`)
	if code != 400 || !strings.Contains(string(b), "$ref is not supported") {
		t.Errorf("$ref: %d %s", code, b)
	}
}

// TestGuidedOverhead: with exact timing, every token of a guided request
// comes --sim-guided-decoding-overhead after the previous one on top of
// the ITL (30 ms here, well above the timers' resolution on a busy host).
func TestGuidedOverhead(t *testing.T) {
	t.Parallel()
	m := startSim(t, "--sim-guided-decoding-overhead", "30ms")
	free := `{"messages":[{"role":"user","content":"a"}],"stream":true,"max_tokens":12,"ignore_eos":true}`
	guided := `{"messages":[{"role":"user","content":"a"}],"stream":true,"max_tokens":300,"response_format":{"type":"json_schema","json_schema":{"name":"w","schema":` + fixtureSchema(t, "get_weather") + `}}}`
	gap := func(body string) (time.Duration, int) {
		res := m.stream(t, context.Background(), "/v1/chat/completions", body)
		n := len(res.events)
		return res.events[n-1].at.Sub(res.events[1].at) / time.Duration(n-2), n
	}
	f, _ := gap(free)
	g, n := gap(guided)
	if g-f < 20*time.Millisecond {
		t.Errorf("ITL free %v, guided %v over %d events: want about 30ms more", f, g, n)
	}
}
