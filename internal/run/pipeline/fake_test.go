package pipeline_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server"
)

// fakeServer is an OpenAI-compatible server whose tokenizer counts
// tokensPerWord tokens a word: /v1/models, streamed chat completions with
// usage, and POST /tokenize unless noTokenize. Its replies are "reply N
// …" (N counts the requests), max_tokens words long, and it records every
// request's messages.
type fakeServer struct {
	tokensPerWord int
	noTokenize    bool
	maxModelLen   int // 0: 100000

	mu       sync.Mutex
	requests [][]fakeMessage
}

type fakeMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type fakeBody struct {
	Prompt    *string       `json:"prompt"`
	Messages  []fakeMessage `json:"messages"`
	MaxTokens int           `json:"max_tokens"`
}

func (f *fakeServer) count(b fakeBody) int {
	n := 0
	if b.Prompt != nil {
		n = len(strings.Fields(*b.Prompt))
	}
	for _, m := range b.Messages {
		n += len(strings.Fields(m.Content))
	}
	return n * f.tokensPerWord
}

// start serves f until the test ends and returns it as an external server.
func (f *fakeServer) start(t *testing.T) server.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"object":"list","data":[{"id":"fake","object":"model","max_model_len":%d}]}`, cmp.Or(f.maxModelLen, 100000))
	})
	mux.HandleFunc("POST /tokenize", func(w http.ResponseWriter, r *http.Request) {
		var b fakeBody
		if f.noTokenize || json.NewDecoder(r.Body).Decode(&b) != nil {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, `{"count":%d,"max_model_len":100000,"tokens":[]}`, f.count(b))
	})
	mux.HandleFunc("POST /v1/chat/completions", f.chat)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	p, err := profile.Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Run(context.Background(), profile.Deployment(p.Name), server.WithBackend(server.KindExternal), server.WithTarget(ts.URL))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	return srv
}

// chat streams the reply one word a chunk, then the usage.
func (f *fakeServer) chat(w http.ResponseWriter, r *http.Request) {
	var b fakeBody
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, b.Messages)
	n := len(f.requests)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	words := []string{"reply", fmt.Sprint(n)}
	for len(words) < b.MaxTokens {
		words = append(words, "word")
	}
	words = words[:max(b.MaxTokens, 1)]
	for i, word := range words {
		finish := "null"
		if i == len(words)-1 {
			finish = `"length"`
		}
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"fake\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":%s}]}\n\n", " "+word, finish)
	}
	fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"fake\",\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n", f.count(b), len(words), f.count(b)+len(words))
	fmt.Fprint(w, "data: [DONE]\n\n")
}
