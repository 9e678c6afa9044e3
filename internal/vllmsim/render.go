package vllmsim

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
	"github.com/vllmperf/vllmperf/internal/vllmsim/tokenizer"
)

// usage is OpenAI's usage object with vLLM's prompt_tokens_details.
type usage struct {
	PromptTokens        int            `json:"prompt_tokens"`
	TotalTokens         int            `json:"total_tokens"`
	CompletionTokens    int            `json:"completion_tokens"`
	PromptTokensDetails *promptDetails `json:"prompt_tokens_details"`
}

type promptDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// Streamed chunk shapes.
type chatDelta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
	// ReasoningContent is the thinking (--reasoning-parser, reasoning.go).
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCallDelta `json:"tool_calls,omitempty"`
}

// toolCallDelta is a streamed piece of a tool call: the first carries its
// id, type and function name, every one a piece of the arguments.
type toolCallDelta struct {
	Index    int    `json:"index"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatChunkChoice struct {
	Index        int       `json:"index"`
	Delta        chatDelta `json:"delta"`
	Logprobs     any       `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
	StopReason   any       `json:"stop_reason,omitempty"`
}

type completionChoice struct {
	Index        int     `json:"index"`
	Text         string  `json:"text"`
	Logprobs     any     `json:"logprobs"`
	FinishReason *string `json:"finish_reason"`
	StopReason   any     `json:"stop_reason"`
}

type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices any    `json:"choices"`
	Usage   *usage `json:"usage,omitempty"`
}

// response writes one request's answer from its engine outputs: a stream
// of server-sent events or one JSON body.
type response struct {
	w       http.ResponseWriter
	req     genRequest
	id      string
	created int64
	eos     int32 // the model's EOS token id: counted, never rendered
	out     *outputStream

	// What was taken from the engine so far.
	completion   int    // tokens
	cached       int    // prompt tokens from the prefix cache (first output)
	sawFirst     bool   // the first output was taken
	finishReason string // set once the request ended ("error" on an engine error)
	failed       error  // the engine's error that ended the request
	cut          bool   // the disconnect fault cut the connection
	toolStarted  bool   // a tool call's first delta was sent

	salt *outputSalt // --sim-output-salt (outputsalt.go); nil: none

	think     *thinking       // --reasoning-parser's layout (reasoning.go); nil: all content
	reasoning strings.Builder // a whole answer's thinking so far
}

// next takes the engine's next output and records its tokens. It reports
// false when the answer ends without one: the connection was cut (cut),
// the engine failed the request (failed, finish reason "error"), or it
// closed the request's channel.
func (r *response) next() (engine.Output, bool) {
	out, step := r.out.next()
	switch {
	case step == stepCut:
		r.cut = true
		return out, false
	case step == stepOver:
		return out, false
	case out.Err != nil:
		r.finishReason, r.failed = "error", out.Err
		return out, false
	}
	if !r.sawFirst {
		r.cached = out.CachedPromptTokens
		r.sawFirst = true
	}
	out.Tokens = r.salt.apply(out.Tokens, r.completion)
	r.completion += len(out.Tokens)
	return out, true
}

// usageAt is the usage object after completion generated tokens, as the
// usage faults report it.
func (r *response) usageAt(completion int) *usage {
	prompt, reported := len(r.req.prompt), r.out.faults.reportedCompletion(completion)
	return &usage{
		PromptTokens: prompt, CompletionTokens: reported, TotalTokens: prompt + reported,
		PromptTokensDetails: &promptDetails{CachedTokens: r.cached},
	}
}

// text is the text of an output's tokens. A request that stops on EOS
// ends with the EOS token, which is counted in completion_tokens but, as in
// vLLM, not rendered.
func (r *response) text(out engine.Output) string {
	toks := r.visible(out)
	if g := r.req.guided; g != nil {
		start := r.completion - len(out.Tokens)
		var b strings.Builder
		for k := range toks {
			if i := start + k; i < len(g.pieces) {
				b.WriteString(g.pieces[i])
			}
		}
		return b.String()
	}
	return tokenizer.Detokenize(toks)
}

// visible are an output's tokens less a final EOS.
func (r *response) visible(out engine.Output) []int32 {
	toks := out.Tokens
	if out.Finished && out.FinishReason == "stop" && len(toks) > 0 && toks[len(toks)-1] == r.eos {
		toks = toks[:len(toks)-1]
	}
	return toks
}

// sseWriter buffers server-sent events; flush puts them on the wire.
// Events that are ready together (the role chunk and the first content,
// the last content, usage and [DONE]) go out in one write, as one engine
// step's output does from vLLM's API server.
type sseWriter struct {
	bw *bufio.Writer
	rc *http.ResponseController
}

// event buffers one "data: JSON" event.
func (s *sseWriter) event(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{"error":{"message":"encode chunk failed","type":"InternalServerError","param":null,"code":500}}`)
	}
	_, _ = s.bw.WriteString("data: ")
	_, _ = s.bw.Write(b)
	_, _ = s.bw.WriteString("\n\n")
}

func (s *sseWriter) done() { _, _ = s.bw.WriteString("data: [DONE]\n\n") }

func (s *sseWriter) flush() {
	_ = s.bw.Flush()
	_ = s.rc.Flush()
}

// object is a streamed chunk's "object".
func (r *response) object() string {
	if r.req.kind == kindCompletion {
		return "text_completion"
	}
	return "chat.completion.chunk"
}

// chunk is a streamed chunk of choices; with continuous_usage_stats it
// carries the usage after completion tokens.
func (r *response) chunk(choices any, completion int) chunk {
	c := chunk{ID: r.id, Object: r.object(), Created: r.created, Model: r.req.model, Choices: choices}
	if r.req.contUsage {
		c.Usage = r.usageAt(completion)
	}
	return c
}

// contentChunk carries one output's text and, on the last, finish_reason.
func (r *response) contentChunk(text string, finish *string) chunk {
	if g := r.req.guided; g != nil && g.tool != "" {
		tc := toolCallDelta{}
		tc.Function.Arguments = text
		if !r.toolStarted {
			r.toolStarted = true
			tc.ID, tc.Type, tc.Function.Name = "chatcmpl-tool-"+r.id, "function", g.tool
		}
		return r.chunk([]chatChunkChoice{{Delta: chatDelta{ToolCalls: []toolCallDelta{tc}}, FinishReason: finish}}, r.completion)
	}
	if r.req.kind == kindChat {
		return r.chunk([]chatChunkChoice{{Delta: chatDelta{Content: &text}, FinishReason: finish}}, r.completion)
	}
	return r.chunk([]completionChoice{{Text: text, FinishReason: finish}}, r.completion)
}

// stream answers with server-sent events, one per engine output, flushed
// as soon as written: vLLM's role chunk first (chat), content chunks, the
// usage chunk (stream_options.include_usage) and [DONE]; an engine error
// mid-stream is a data: {"error":...} event before [DONE].
func (r *response) stream() {
	h := r.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Request-Id", r.id)
	r.w.WriteHeader(http.StatusOK)
	sse := &sseWriter{bw: bufio.NewWriter(r.w), rc: http.NewResponseController(r.w)}
	_ = sse.rc.Flush()
	first := true
	for {
		out, ok := r.next()
		if !ok {
			break
		}
		if first && r.req.kind == kindChat {
			// vLLM's first chat chunk carries only the role.
			empty := ""
			sse.event(r.chunk([]chatChunkChoice{{Delta: chatDelta{Role: "assistant", Content: &empty}}}, 0))
		}
		first = false
		var finish *string
		if out.Finished {
			r.finishReason = out.FinishReason
			finish = &r.finishReason
		}
		if len(out.Tokens) == 0 && finish == nil {
			continue
		}
		if c, send := r.outChunk(out, finish); send {
			sse.event(c)
		}
		if out.Finished {
			break
		}
		sse.flush()
	}
	if r.cut {
		return
	}
	if r.failed != nil {
		sse.event(map[string]*apiError{"error": engineError(r.failed)})
	}
	if r.finishReason != "" { // else the client went away: nothing left to tell it
		if r.req.usage && r.failed == nil {
			sse.event(chunk{ID: r.id, Object: r.object(), Created: r.created, Model: r.req.model, Choices: []struct{}{}, Usage: r.usageAt(r.completion)})
		}
		sse.done()
	}
	sse.flush()
}

// whole answers with one JSON body once the request has finished.
// message is a whole chat answer's message: the text, or the tool call.
func (r *response) message(text string) map[string]any {
	if g := r.req.guided; g != nil && g.tool != "" {
		call := map[string]any{"id": "chatcmpl-tool-" + r.id, "type": "function", "function": map[string]any{"name": g.tool, "arguments": text}}
		return map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{call}}
	}
	if r.think != nil {
		return map[string]any{"role": "assistant", "content": text, "reasoning_content": r.reasoning.String(), "tool_calls": []any{}}
	}
	return map[string]any{"role": "assistant", "content": text, "tool_calls": []any{}}
}

func (r *response) whole() {
	var text strings.Builder
	for r.finishReason == "" {
		out, ok := r.next()
		if !ok {
			break
		}
		text.WriteString(r.answerText(out))
		if out.Finished {
			r.finishReason = out.FinishReason
		}
	}
	switch {
	case r.cut:
		return
	case r.failed != nil:
		engineError(r.failed).write(r.w)
		return
	case r.finishReason == "":
		if !r.out.canceled() {
			writeError(r.w, http.StatusInternalServerError, "InternalServerError", "", "the engine ended the request without a finished output")
		}
		return
	}
	resp := map[string]any{"id": r.id, "created": r.created, "model": r.req.model, "usage": r.usageAt(r.completion)}
	if r.req.kind == kindChat {
		resp["object"] = "chat.completion"
		resp["choices"] = []map[string]any{{
			"index":         0,
			"message":       r.message(text.String()),
			"logprobs":      nil,
			"finish_reason": r.finishReason,
			"stop_reason":   nil,
		}}
	} else {
		resp["object"] = "text_completion"
		resp["choices"] = []map[string]any{{
			"index": 0, "text": text.String(), "logprobs": nil, "finish_reason": r.finishReason, "stop_reason": nil,
		}}
	}
	writeJSON(r.w, http.StatusOK, resp)
}
