package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// streamResult is what one streamed chat request returned.
type streamResult struct {
	contentChunks    int
	text             string
	completionTokens int
	finishReason     string
	done             bool
}

// streamChat sends one streamed chat completion to base and reads the SSE
// stream with net/http only.
func streamChat(t *testing.T, base, model string) streamResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body, _ := json.Marshal(map[string]any{
		"model":          model,
		"messages":       []map[string]string{{"role": "user", "content": "Say hello in five words."}},
		"stream":         true,
		"max_tokens":     12,
		"stream_options": map[string]any{"include_usage": true},
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /v1/chat/completions: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/chat/completions: %s", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type = %q, want text/event-stream", ct)
	}
	var res streamResult
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			res.done = true
			break
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("bad SSE chunk %q: %v", data, err)
		}
		if len(chunk.Error) > 0 {
			t.Fatalf("error in stream: %s", chunk.Error)
		}
		for _, c := range chunk.Choices {
			if c.Delta.Content != "" {
				res.contentChunks++
				res.text += c.Delta.Content
			}
			if c.FinishReason != nil {
				res.finishReason = *c.FinishReason
			}
		}
		if chunk.Usage != nil {
			res.completionTokens = chunk.Usage.CompletionTokens
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read stream: %v", err)
	}
	return res
}

// checkStream fails the test unless res is a complete, non-empty stream.
func checkStream(t *testing.T, res streamResult) {
	t.Helper()
	if !res.done {
		t.Error("stream ended without data: [DONE]")
	}
	if res.contentChunks == 0 {
		t.Error("stream carried no content")
	}
	if res.completionTokens <= 0 {
		t.Errorf("usage.completion_tokens = %d, want > 0 (include_usage)", res.completionTokens)
	}
	if res.finishReason == "" {
		t.Error("no finish_reason in the stream")
	}
}

// String formats the result for test logs.
func (r streamResult) String() string {
	return fmt.Sprintf("%d content chunks, %d tokens, finish %q", r.contentChunks, r.completionTokens, r.finishReason)
}
