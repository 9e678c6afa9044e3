package openai_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/run/sample"
)

// A vLLM-shaped stream: role-only chunk, two content chunks with continuous
// usage, the finish chunk, the usage chunk and [DONE].
const exampleStream = `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":{"prompt_tokens":5,"completion_tokens":0}}

data: {"choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}],"usage":{"prompt_tokens":5,"completion_tokens":1}}

data: {"choices":[{"index":0,"delta":{"content":" world"},"finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":3}}

data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3}}

data: [DONE]

`

func ExampleClient_Send() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, exampleStream)
	}))
	defer srv.Close()

	c := openai.New(srv.URL, openai.WithAPIKey("sk-local"))
	defer c.CloseIdleConnections()
	var s sample.Sample
	c.Send(context.Background(), openai.Request{Model: "m", Prompt: "Say hello", MaxTokens: 3}, &s)

	_, hasTTFT := s.TTFT()
	_, hasTPOT := s.TPOT()
	fmt.Println("ok:", s.OK(), "finish:", s.FinishReason)
	fmt.Println("chunks:", len(s.Chunks), "tokens per chunk:", s.Chunks[0].Tokens, s.Chunks[1].Tokens)
	fmt.Println("n:", s.CompletionTokens, "TTFT:", hasTTFT, "TPOT:", hasTPOT)
	// Output:
	// ok: true finish: length
	// chunks: 2 tokens per chunk: 1 2
	// n: 3 TTFT: true TPOT: true
}
