package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/vllmperf/vllmperf/internal/request/schema"
	"github.com/vllmperf/vllmperf/internal/run/sample"
)

// TestStructuredRequests: a schema goes out as response_format, or as the
// parameters of the one tool the model must call; the output (content or
// tool-call arguments) is checked against it, and one that does not match
// is a failed request of kind schema.
func TestStructuredRequests(t *testing.T) {
	const person = `{"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}`
	s, err := schema.Compile("person", json.RawMessage(person))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, tool, reply string
		toolReply         bool
		want              sample.ErrorKind // "" for success
	}{
		{"valid json", "", `{"name": "ada"}`, false, ""},
		{"wrong json", "", `{"name": 1}`, false, sample.ErrSchema},
		{"not json", "", `sure! here you go`, false, sample.ErrSchema},
		{"valid tool call", "who", `{"name": "bob"}`, true, ""},
		{"tool call breaks the schema", "who", `{"nom": "bob"}`, true, sample.ErrSchema},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body map[string]json.RawMessage
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				_ = json.Unmarshal(b, &body)
				w.Header().Set("Content-Type", "text/event-stream")
				delta := fmt.Sprintf(`{"content":%q}`, tc.reply)
				if tc.toolReply {
					delta = fmt.Sprintf(`{"tool_calls":[{"index":0,"id":"t","type":"function","function":{"name":%q,"arguments":%q}}]}`, tc.tool, tc.reply)
				}
				fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":\"stop\"}]}\n\n", delta)
				fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":5,\"total_tokens\":8}}\n\ndata: [DONE]\n\n")
			}))
			defer srv.Close()
			c := New(srv.URL)
			defer c.CloseIdleConnections()
			var smp sample.Sample
			c.Send(context.Background(), Request{Model: "m", Prompt: "p", MaxTokens: 8, Schema: s, Tool: tc.tool}, &smp)
			switch {
			case tc.want == "" && smp.Err != nil:
				t.Fatalf("failed: %v", smp.Err)
			case tc.want != "" && (smp.Err == nil || smp.Err.Kind != tc.want):
				t.Fatalf("err = %v, want kind %s", smp.Err, tc.want)
			}
			if smp.Text != tc.reply || len(smp.Chunks) != 1 {
				t.Errorf("text %q with %d chunks, want %q in one", smp.Text, len(smp.Chunks), tc.reply)
			}
			key := "response_format"
			if tc.tool != "" {
				key = "tool_choice"
				if string(body["tools"]) == "" {
					t.Errorf("no tools sent")
				}
			}
			if len(body[key]) == 0 {
				t.Errorf("no %s sent: %v", key, body)
			}
		})
	}
}
