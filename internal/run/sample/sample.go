// Package sample holds the record of one benchmark request and the per-request
// latency definitions, which follow vLLM's `vllm bench serve` exactly
// (vllm/benchmarks/lib/endpoint_request_func.py):
//
//   - TTFT: first content-bearing chunk − send time (a role-only first chunk does not count).
//   - E2EL: last content-bearing chunk − send time (usage chunk and [DONE] do not count).
//   - ITL: gaps between successive content-bearing chunks, one per chunk, not per token.
//   - TPOT: (E2EL − TTFT) / (n − 1), n = usage.completion_tokens, only when n > 1.
//
// A failed request is data: its Err field is set and it is kept with the others.
package sample

import (
	"fmt"
	"time"
)

// ErrorKind classifies why a request failed.
type ErrorKind string

// The error kinds a request can end with.
const (
	// ErrHTTPStatus: the server answered a non-2xx status before any stream (500, 400, ...).
	ErrHTTPStatus ErrorKind = "http_status"
	// ErrRateLimited: the server answered 429.
	ErrRateLimited ErrorKind = "rate_limited"
	// ErrAuth: the server refused the request's credentials (401 or 403):
	// the API key is missing or not the one the server was started with.
	ErrAuth ErrorKind = "auth"
	// ErrAPIEvent: an error event arrived in the stream (`data: {"error": ...}`).
	ErrAPIEvent ErrorKind = "api_error"
	// ErrStreamCut: the stream ended before finish_reason and usage were seen.
	ErrStreamCut ErrorKind = "stream_cut"
	// ErrTimeout: the request ran past its deadline (or stalled past the idle timeout).
	ErrTimeout ErrorKind = "timeout"
	// ErrConnection: the connection could not be made or broke.
	ErrConnection ErrorKind = "connection"
	// ErrCanceled: the run was interrupted (its context canceled) while the
	// request was in flight. Such a request did not fail: statistics count
	// it apart, as interrupted (see Interrupted).
	ErrCanceled ErrorKind = "canceled"
	// ErrGraceExpired: the request was still in flight when the grace period
	// after the run's duration ended, and the load generator canceled it. It
	// counts as failed: it did not finish in the time the run allowed.
	ErrGraceExpired ErrorKind = "grace_expired"
	// ErrProtocol: the response could not be understood (bad JSON, wrong content type).
	ErrProtocol ErrorKind = "protocol"
	// ErrPriorTurn: a conversation's turn was not sent because an earlier
	// turn of it failed (the next turn carries the server's reply). It
	// counts as failed.
	ErrPriorTurn ErrorKind = "prior_turn_failed"
	// ErrSchema: a structured-output request (response_format json_schema,
	// or a required tool call) completed, but its output does not parse
	// against the schema it was asked for.
	ErrSchema ErrorKind = "schema"
	// ErrOverlong: the server streamed more completion tokens than the
	// request's max_tokens allowed; the client stopped reading it.
	ErrOverlong ErrorKind = "overlong"
)

// Error describes a failed request.
type Error struct {
	Kind    ErrorKind `json:"kind"`
	Status  int       `json:"status,omitempty"` // HTTP status, when one was received
	Message string    `json:"message"`
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s (HTTP %d): %s", e.Kind, e.Status, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Kind, e.Message)
}

// Detail is the error without its kind: "HTTP 400: message", or the
// message alone when no status was received.
func (e *Error) Detail() string {
	if e.Status != 0 {
		return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message)
	}
	return e.Message
}

// Chunk is one content-bearing streamed chunk.
type Chunk struct {
	// At is the arrival time as an offset from Sample.Sent.
	At time.Duration `json:"at_ns"`
	// Tokens is the number of completion tokens the chunk carried, from
	// continuous usage stats; 0 when the server did not report it.
	Tokens int `json:"tokens"`
	// Part says what a reasoning model's chunk carried: "" answer text
	// only (every chunk of other models), PartReasoning thinking only
	// (delta.reasoning_content or delta.reasoning), PartBoth the end of
	// the thinking and the start of the answer.
	Part string `json:"part,omitempty"`
}

// The values of Chunk.Part besides "" (answer only).
const (
	PartReasoning = "reasoning"
	PartBoth      = "both"
)

// Sample is the record of one request.
type Sample struct {
	// Index is the request's position in dispatch order (warm-up included).
	Index int `json:"index"`
	// Warmup marks warm-up requests, which statistics exclude.
	Warmup bool `json:"warmup,omitempty"`
	// Scheduled is when the load generator meant to send the request
	// (open loop: the arrival time; closed loop: equal to Sent).
	Scheduled time.Time `json:"scheduled"`
	// Sent is the clock just before the POST (vLLM's st).
	Sent time.Time `json:"sent"`
	// Header is when the response headers arrived (zero if they never did).
	Header time.Time `json:"header,omitzero"`
	// Done is when the request ended, successfully or not.
	Done time.Time `json:"done"`
	// Chunks are the content-bearing chunks in arrival order.
	Chunks []Chunk `json:"chunks,omitempty"`
	// FinishReason is the finish_reason the server reported ("stop", "length", ...).
	FinishReason string `json:"finish_reason,omitempty"`
	// PromptTokens, CompletionTokens and CachedTokens come from usage.
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	CachedTokens     int `json:"cached_tokens,omitempty"`
	// Unstreamed marks an answer that came whole (an embedding): it has
	// no chunks, and its E2EL is Done − Sent.
	Unstreamed bool `json:"unstreamed,omitempty"`
	// Err is set when the request failed.
	Err *Error `json:"error,omitempty"`
	// Text is the generated text, kept only when the request asked for it
	// (openai.Request.KeepText: a conversation's next turn carries it, a
	// structured output is checked against its schema).
	Text string `json:"text,omitempty"`
}

// OK reports whether the request succeeded.
func (s *Sample) OK() bool { return s.Err == nil }

// Interrupted reports whether the request was cut short by the run being
// interrupted (ErrCanceled): it neither succeeded nor failed.
func (s *Sample) Interrupted() bool { return s.Err != nil && s.Err.Kind == ErrCanceled }

// Failed reports whether the request failed: it has an error, and the error
// is not an interruption of the run.
func (s *Sample) Failed() bool { return s.Err != nil && s.Err.Kind != ErrCanceled }

// TTFT is the time to the first content-bearing chunk; ok is false when
// the request failed or produced no content.
func (s *Sample) TTFT() (d time.Duration, ok bool) {
	if !s.OK() || len(s.Chunks) == 0 {
		return 0, false
	}
	return s.Chunks[0].At, true
}

// E2EL is the time to the last content-bearing chunk (to the whole
// answer's end when Unstreamed).
func (s *Sample) E2EL() (d time.Duration, ok bool) {
	if s.Unstreamed && s.OK() {
		return s.Done.Sub(s.Sent), true
	}
	if !s.OK() || len(s.Chunks) == 0 {
		return 0, false
	}
	return s.Chunks[len(s.Chunks)-1].At, true
}

// TPOT is (E2EL − TTFT)/(n − 1) with n = usage.completion_tokens; ok is false
// unless the request succeeded with n > 1.
func (s *Sample) TPOT() (d time.Duration, ok bool) {
	if !s.OK() || len(s.Chunks) == 0 || s.CompletionTokens <= 1 {
		return 0, false
	}
	first, last := s.Chunks[0].At, s.Chunks[len(s.Chunks)-1].At
	return (last - first) / time.Duration(s.CompletionTokens-1), true
}

// ITLs appends the gaps between successive content-bearing chunks to dst
// (one per chunk, as vLLM counts them) and returns it.
func (s *Sample) ITLs(dst []time.Duration) []time.Duration {
	if !s.OK() {
		return dst
	}
	for i := 1; i < len(s.Chunks); i++ {
		dst = append(dst, s.Chunks[i].At-s.Chunks[i-1].At)
	}
	return dst
}

// TokenITLs appends the per-token normalised gaps to dst: each chunk gap
// divided by the tokens its later chunk carried (chunks without a token count
// count as one token). With speculative decoding a chunk carries several tokens,
// and this is the latency per token rather than per chunk.
func (s *Sample) TokenITLs(dst []time.Duration) []time.Duration {
	if !s.OK() {
		return dst
	}
	for i := 1; i < len(s.Chunks); i++ {
		n := s.Chunks[i].Tokens
		if n < 1 {
			n = 1
		}
		dst = append(dst, (s.Chunks[i].At-s.Chunks[i-1].At)/time.Duration(n))
	}
	return dst
}

// QueueTime is how long the request waited in the client between its
// scheduled time and its send (time spent on the max-concurrency cap in an
// open-loop run). It is zero in closed-loop runs.
func (s *Sample) QueueTime() time.Duration {
	if s.Scheduled.IsZero() || s.Sent.Before(s.Scheduled) {
		return 0
	}
	return s.Sent.Sub(s.Scheduled)
}

// Fail records the request's failure; the first failure recorded wins.
func (s *Sample) Fail(kind ErrorKind, status int, msg string) {
	if s.Err != nil {
		return
	}
	s.Err = &Error{Kind: kind, Status: status, Message: msg}
}
