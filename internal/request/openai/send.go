package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/vllmperf/vllmperf/internal/run/sample"
)

// Causes of a request context ending that Send itself brought about.
var (
	errIdleTimeout    = errors.New("idle timeout")
	errRequestTimeout = errors.New("request timeout")
)

// maxPrealloc caps the chunk slice preallocated from MaxTokens, so a huge
// max_tokens does not reserve memory a short answer never uses.
const maxPrealloc = 1024

// maxDrain bounds how much of the body after [DONE] is read so that the
// connection can go back to the pool (an unread body closes it).
const maxDrain = 64 << 10

// rawStream is what go-openai's chat and completion streams share.
type rawStream interface {
	RecvRaw() ([]byte, error)
	Close() error
}

// Send performs req as a streamed request and records it in s. The caller
// sets s.Index, s.Warmup and s.Scheduled; Send fills everything else. Send
// never returns an error: a failed request is recorded in s.Err (kinds in
// package sample). A stream that ends without both a finish_reason and the
// final usage chunk is a failure (sample.ErrStreamCut), never a success.
//
// Counting follows vLLM's benchmark: a chunk is content-bearing when its
// text (chat delta.content or delta.reasoning_content/reasoning, completion
// text) is non-empty, so vLLM's role-only first chunk, the finish chunk with
// empty text, the usage chunk and [DONE] are not content. A chunk's Tokens is
// the increase of the cumulative usage.completion_tokens (continuous usage
// stats) since the previous content chunk, 0 when the server reports none.
// CompletionTokens is the final usage.completion_tokens, never a chunk count.
func (c *Client) Send(ctx context.Context, req Request, s *sample.Sample) {
	start := time.Now()
	s.Sent = start // replaced by doer just before the POST
	s.Header = time.Time{}
	s.Done = time.Time{}
	s.Chunks = s.Chunks[:0]
	s.FinishReason = ""
	s.PromptTokens, s.CompletionTokens, s.CachedTokens = 0, 0, 0
	s.Err = nil
	s.Text = ""
	s.Unstreamed = false
	defer func() {
		if s.Done.IsZero() {
			s.Done = time.Now()
		}
	}()

	if c.baseErr != nil {
		s.Fail(sample.ErrConnection, 0, c.redact("invalid base URL: "+c.baseErr.Error()))
		return
	}
	if !req.Endpoint.Known() {
		s.Fail(sample.ErrProtocol, 0, fmt.Sprintf("invalid request: unknown endpoint %q", req.Endpoint))
		return
	}
	if len(req.Images) > 0 && req.Endpoint != Chat && req.Endpoint != "" {
		s.Fail(sample.ErrProtocol, 0, fmt.Sprintf("invalid request: images go to the chat endpoint, not %s", req.Endpoint))
		return
	}
	switch req.Endpoint {
	case Embeddings:
		c.sendEmbeddings(ctx, req, s) // unstreamed (embeddings.go)
		return
	case Rerank:
		c.sendRerank(ctx, req, s) // unstreamed (rerank.go)
		return
	}
	if want := prealloc(req.MaxTokens); cap(s.Chunks) < want {
		s.Chunks = make([]sample.Chunk, 0, want)
	}

	rctx, cancel := c.requestContext(ctx)
	defer cancel(nil)
	st := &reqState{req: &req, s: s}
	if c.idleTimeout > 0 {
		st.dog = startWatchdog(start, c.idleTimeout, cancel)
		defer st.dog.stop()
	}
	rctx = context.WithValue(rctx, stateKey{}, st)

	var (
		stream rawStream
		err    error
	)
	if req.Endpoint == Completions {
		var cs *goopenai.CompletionStream
		cs, err = c.oa.CreateCompletionStream(rctx, goopenai.CompletionRequest{
			Model:  req.Model,
			Prompt: req.completionPrompt(),
		})
		if cs != nil {
			stream = cs
		}
	} else {
		msgs := req.chatMessages()
		var cs *goopenai.ChatCompletionStream
		cs, err = c.oa.CreateChatCompletionStream(rctx, goopenai.ChatCompletionRequest{
			Model:    req.Model,
			Messages: msgs,
		})
		if cs != nil {
			stream = cs
		}
	}
	if err != nil || stream == nil {
		if err == nil {
			err = errors.New("go-openai returned no stream")
		}
		c.fail(s, ctx, rctx, err, st.posted)
		return
	}
	defer func() { _ = stream.Close() }()

	if c.read(ctx, rctx, stream, st) {
		finish(st)
	}
}

// finish ends a request whose stream ended well: the rest of the body is
// read so the connection is reused, not closed, and a structured output
// is checked against its schema.
func finish(st *reqState) {
	if st.body != nil {
		_, _ = io.CopyN(io.Discard, st.body, maxDrain)
	}
	if st.req.Schema != nil {
		if err := st.req.Schema.Check(st.s.Text); err != nil {
			st.s.Fail(sample.ErrSchema, 0, err.Error())
		}
	}
}

// read consumes the stream into s and reports whether it ended well.
func (c *Client) read(ctx, rctx context.Context, stream rawStream, st *reqState) bool {
	s := st.s
	var (
		w          wireChunk
		dec        = newEventDecoder()
		prevTokens int  // cumulative completion_tokens last reported
		pending    int  // tokens reported since the last content chunk
		finalUsage bool // the include_usage chunk (empty choices) arrived
		events     int
	)
	for {
		raw, err := stream.RecvRaw()
		now := time.Now()
		if err != nil {
			s.Done = now
			if errors.Is(err, io.EOF) {
				return c.checkEnd(s, finalUsage, events)
			}
			c.fail(s, ctx, rctx, err, true)
			return false
		}
		st.dog.event(now)
		events++
		if len(raw) == 0 {
			s.Done = now
			s.Fail(sample.ErrProtocol, 0, fmt.Sprintf("event %d: empty data or an error event that does not parse", events))
			return false
		}
		w.reset()
		if err := dec.decode(raw, &w); err != nil {
			s.Done = now
			data := clip(redactKey(string(raw), c.apiKey), 120)
			s.Fail(sample.ErrProtocol, 0, c.redact(fmt.Sprintf("event %d: %v: %q", events, err, data)))
			return false
		}
		if w.Object {
			s.Done = now
			var apiErr goopenai.APIError
			msg := "unparseable error object"
			if json.Unmarshal(raw, &apiErr) == nil {
				msg = describeAPIError(&apiErr)
			}
			s.Fail(sample.ErrAPIEvent, 0, c.redact("error object in stream: "+msg))
			return false
		}
		if w.Usage != nil && w.Usage.CompletionTokens >= 0 {
			u := w.Usage
			if u.CompletionTokens > prevTokens {
				pending += u.CompletionTokens - prevTokens
				prevTokens = u.CompletionTokens
			}
			s.PromptTokens = u.PromptTokens
			s.CompletionTokens = u.CompletionTokens
			s.CachedTokens = u.PromptTokensDetails.CachedTokens
			if len(w.Choices) == 0 {
				finalUsage = true
			}
		}
		if err := overlong(st.req.MaxTokens, s.CompletionTokens, len(s.Chunks)); err != "" {
			s.Done = now
			s.Fail(sample.ErrOverlong, 0, err)
			return false
		}
		content, answer, thinking := false, false, false
		for i := range w.Choices {
			ch := &w.Choices[i]
			if ch.Delta.Content || ch.Delta.ReasoningContent || ch.Delta.Reasoning || ch.Text || nonEmpty(ch.Delta.ToolCalls) {
				content = true
			}
			answer = answer || bool(ch.Delta.Content || ch.Text || nonEmpty(ch.Delta.ToolCalls))
			thinking = thinking || bool(ch.Delta.ReasoningContent || ch.Delta.Reasoning)
			if ch.FinishReason != "" {
				s.FinishReason = ch.FinishReason
			}
		}
		if content {
			if len(s.Chunks) == 0 {
				sample.FirstToken(ctx, s.Sent, now)
			}
			s.Chunks = append(s.Chunks, sample.Chunk{At: now.Sub(s.Sent), Tokens: pending, Part: chunkPart(thinking, answer)})
			pending = 0
			if st.req.KeepText || st.req.Schema != nil {
				s.Text += chunkText(raw)
			}
		}
	}
}

// overlongSlack is how many content chunks past max_tokens a stream may
// send before it is cut. vLLM sends no chunk without a token, but a
// server may send a few empty deltas (a detokenizer holding back part of
// a character); the slack keeps those from failing a request while an
// endless stream is still cut after about twice what was asked.
func overlongSlack(maxTokens int) int { return maxTokens + 16 }

// usageSlack is how many completion tokens past max_tokens a server's
// usage may report before the stream is cut as overlong: a usage a few
// tokens off is a miscount, which the counter reconciliation judges
// (reconcile/generation_tokens); a stream that goes on is cut here.
const usageSlack = 16

// overlong says why a stream has run past maxTokens (0: no bound): the
// usage's completion tokens past it by more than usageSlack, or more
// content chunks than it and its overlongSlack; "" while it has not.
func overlong(maxTokens, usageTokens, chunks int) string {
	switch {
	case maxTokens <= 0:
		return ""
	case usageTokens > maxTokens+usageSlack:
		return fmt.Sprintf("the server reported %d completion tokens, more than max_tokens %d: it ignores max_tokens; stopped reading the stream", usageTokens, maxTokens)
	case chunks > maxTokens+overlongSlack(maxTokens):
		return fmt.Sprintf("the server streamed %d content chunks for max_tokens %d: it ignores max_tokens; stopped reading the stream", chunks, maxTokens)
	}
	return ""
}

// checkEnd judges a stream that ended with io.EOF: go-openai returns io.EOF
// both for [DONE] and for a connection closed cleanly mid-stream, so only a
// finish_reason together with the final usage chunk proves completion.
func (c *Client) checkEnd(s *sample.Sample, finalUsage bool, events int) bool {
	switch {
	case s.FinishReason != "" && finalUsage:
		return true
	case s.FinishReason == "" && !finalUsage:
		s.Fail(sample.ErrStreamCut, 0, fmt.Sprintf("stream ended after %d events without finish_reason and usage", events))
	case s.FinishReason == "":
		s.Fail(sample.ErrStreamCut, 0, fmt.Sprintf("stream ended after %d events without finish_reason", events))
	default:
		s.Fail(sample.ErrStreamCut, 0, fmt.Sprintf("stream ended after %d events without the usage chunk (is stream_options.include_usage supported?)", events))
	}
	return false
}

// prealloc is the chunk capacity reserved for a request.
func prealloc(maxTokens int) int {
	switch {
	case maxTokens <= 0:
		return 256
	case maxTokens > maxPrealloc:
		return maxPrealloc
	default:
		return maxTokens
	}
}

// watchdog cancels a request when no stream event arrives for idle. Each
// event costs one atomic store; the timer re-arms itself only when it fires.
type watchdog struct {
	base    time.Time
	idle    time.Duration
	last    atomic.Int64 // time of the last event, ns since base
	stopped atomic.Bool
	timer   *time.Timer
	cancel  context.CancelCauseFunc
}

func startWatchdog(base time.Time, idle time.Duration, cancel context.CancelCauseFunc) *watchdog {
	w := &watchdog{base: base, idle: idle, cancel: cancel}
	w.timer = time.AfterFunc(time.Hour, w.fire)
	w.timer.Reset(idle)
	return w
}

// event records that a stream event arrived at now. A nil watchdog ignores it.
func (w *watchdog) event(now time.Time) {
	if w != nil {
		w.last.Store(int64(now.Sub(w.base)))
	}
}

func (w *watchdog) fire() {
	if w.stopped.Load() {
		return
	}
	gap := time.Since(w.base) - time.Duration(w.last.Load())
	if gap >= w.idle {
		w.cancel(errIdleTimeout)
		return
	}
	w.timer.Reset(w.idle - gap)
}

func (w *watchdog) stop() {
	w.stopped.Store(true)
	w.timer.Stop()
}

// wireChunk is the part of a chat or completion chunk Send needs. It is
// reused across events; reset clears it before each decode.
type wireChunk struct {
	Object  isError      `json:"object"` // an error sent as a bare object
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
	spare   wireUsage
}

type wireChoice struct {
	Delta struct {
		Content          nonEmpty     `json:"content"`
		ReasoningContent nonEmpty     `json:"reasoning_content"`
		Reasoning        nonEmpty     `json:"reasoning"`
		ToolCalls        toolArgument `json:"tool_calls"`
	} `json:"delta"`
	Text         nonEmpty `json:"text"`
	FinishReason string   `json:"finish_reason"`
}

type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// reset prepares w for the next decode without allocating: the choices
// keep their capacity, and Usage points at the spare with a sentinel, so an
// absent usage (left as the sentinel) is told from a present one, and
// "usage": null sets the pointer to nil.
func (w *wireChunk) reset() {
	for i := range w.Choices {
		w.Choices[i] = wireChoice{}
	}
	w.Choices = w.Choices[:0]
	w.Object = false
	w.spare = wireUsage{CompletionTokens: -1}
	w.Usage = &w.spare
}

// eventDecoder decodes one JSON event at a time with a json.Decoder kept
// for the whole stream: unlike json.Unmarshal, which builds fresh decoder
// state per call (several allocations per event), it reuses its scanner and
// error context.
type eventDecoder struct {
	rd  bytes.Reader
	dec *json.Decoder
}

func newEventDecoder() *eventDecoder {
	e := &eventDecoder{}
	e.dec = json.NewDecoder(&e.rd)
	return e
}

// decode decodes raw, which must hold exactly one JSON value, into v.
func (e *eventDecoder) decode(raw []byte, v any) error {
	e.rd.Reset(raw)
	start := e.dec.InputOffset()
	if err := e.dec.Decode(v); err != nil {
		return err
	}
	if used := e.dec.InputOffset() - start; used != int64(len(raw)) {
		return fmt.Errorf("data after the JSON value at byte %d", used)
	}
	return nil
}

// isError decodes an "object" field into whether it is "error" (vLLM's
// ErrorResponse), without allocating the string.
type isError bool

// UnmarshalJSON implements json.Unmarshaler.
func (e *isError) UnmarshalJSON(b []byte) error {
	*e = string(b) == `"error"`
	return nil
}

// nonEmpty decodes a JSON string field into whether it is non-empty,
// without allocating the string.
type nonEmpty bool

// UnmarshalJSON implements json.Unmarshaler.
func (n *nonEmpty) UnmarshalJSON(b []byte) error {
	*n = len(b) > 2 && b[0] == '"'
	return nil
}

// chunkText is the generated text of one chunk: its choices' delta.content
// (chat) or text (completions). Only requests that keep their text pay
// for this second decode.
func chunkText(raw []byte) string {
	var c struct {
		Choices []struct {
			Delta struct {
				Content   string `json:"content"`
				ToolCalls []struct {
					Function struct {
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"delta"`
			Text string `json:"text"`
		} `json:"choices"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return ""
	}
	var out string
	for _, ch := range c.Choices {
		out += ch.Delta.Content + ch.Text
		for _, tc := range ch.Delta.ToolCalls {
			out += tc.Function.Arguments
		}
	}
	return out
}

// chunkPart is sample.Chunk.Part for a chunk that carried thinking,
// answer text, or both.
func chunkPart(thinking, answer bool) string {
	switch {
	case thinking && answer:
		return sample.PartBoth
	case thinking:
		return sample.PartReasoning
	}
	return ""
}

// requestContext is one request's context: canceled with a cause, and
// ended by the request timeout (errRequestTimeout) when one is set. The
// returned cancel releases both.
func (c *Client) requestContext(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	rctx, cancel := context.WithCancelCause(ctx)
	if c.requestTimeout <= 0 {
		return rctx, cancel
	}
	tctx, cancelT := context.WithTimeoutCause(rctx, c.requestTimeout, errRequestTimeout)
	return tctx, func(cause error) {
		cancel(cause) // first: the timeout context takes the parent's cause
		cancelT()
	}
}
