package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// fakeVLLM is an OpenAI-compatible server that misbehaves on purpose, for
// the faults the simulator has no switch for. It serves /health,
// /v1/models and a streamed /v1/chat/completions in vLLM's wire format;
// /metrics answers 404.
type fakeVLLM struct {
	// tokens is how many one-token content chunks each request gets,
	// whatever max_tokens asks (a server that ignores ignore_eos).
	tokens int
	// stallAfter > 0 holds the stream open after that many chunks until
	// the client goes away (the request never ends on its own).
	stallAfter int
	// maxModelLen is reported on /v1/models when > 0.
	maxModelLen int
	// chatStatus, when set, answers every chat request with this status
	// and chatBody (vLLM's error JSON).
	chatStatus int
	chatBody   string
	// arrived counts chat requests; inFlight is signalled (non-blocking)
	// on each arrival.
	arrived  atomic.Int64
	inFlight chan struct{}
}

const fakeModel = "fake/model"

// start serves f on loopback until the test ends and returns its URL.
func (f *fakeVLLM) start(t *testing.T) string {
	t.Helper()
	f.inFlight = make(chan struct{}, 1024)
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		m := map[string]any{"id": fakeModel, "object": "model"}
		if f.maxModelLen > 0 {
			m["max_model_len"] = f.maxModelLen
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": []any{m}})
	})
	mux.HandleFunc("/v1/chat/completions", f.chat)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func (f *fakeVLLM) chat(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	f.arrived.Add(1)
	select {
	case f.inFlight <- struct{}{}:
	default:
	}
	if f.chatStatus != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.chatStatus)
		_, _ = io.WriteString(w, f.chatBody)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	fl := w.(http.Flusher)
	chunk := func(delta, finish, usage string) {
		fmt.Fprintf(w, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764700000,"model":%q,"choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}],"usage":%s}`+"\n\n",
			fakeModel, delta, finish, usage)
		fl.Flush()
	}
	chunk(`{"role":"assistant","content":""}`, "null", "null")
	for i := range f.tokens {
		if f.stallAfter > 0 && i == f.stallAfter {
			<-r.Context().Done()
			return
		}
		chunk(`{"content":"a"}`, "null", fmt.Sprintf(`{"prompt_tokens":8,"total_tokens":%d,"completion_tokens":%d}`, 9+i, i+1))
	}
	chunk(`{}`, `"length"`, "null")
	fmt.Fprintf(w, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764700000,"model":%q,"choices":[],"usage":{"prompt_tokens":8,"total_tokens":%d,"completion_tokens":%d}}`+"\n\n", fakeModel, 8+f.tokens, f.tokens)
	fmt.Fprint(w, "data: [DONE]\n\n")
	fl.Flush()
}
