package vllmsim

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
)

// maxBodyBytes bounds a request body.
const maxBodyBytes = 32 << 20

// routes builds the HTTP API: vLLM's OpenAI-compatible endpoints.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", s.handleHealth)
	mux.HandleFunc("GET /ping", s.handleHealth)
	mux.HandleFunc("POST /ping", s.handleHealth)
	mux.HandleFunc("GET /version", s.handleVersion)
	mux.HandleFunc("GET /metrics", s.handleMetrics)
	mux.HandleFunc("GET /v1/models", s.handleModels)
	mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	mux.HandleFunc("POST /v1/completions", s.handleCompletions)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "NotFoundError", "", fmt.Sprintf("%s %s is not served by vllm-sim (routes: /health, /ping, /version, /metrics, /v1/models, /v1/chat/completions, /v1/completions)", r.Method, r.URL.Path))
	})
	return s.auth(mux)
}

// auth enforces --api-key on /v1/* as vLLM does: anything else is open.
func (s *Server) auth(next http.Handler) http.Handler {
	if s.opts.APIKey == "" {
		return next
	}
	want := []byte("Bearer " + s.opts.APIKey)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodOptions && strings.HasPrefix(r.URL.Path, "/v1") {
			got := []byte(r.Header.Get("Authorization"))
			if subtle.ConstantTimeCompare(got, want) != 1 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = io.WriteString(w, `{"error":"Unauthorized"}`)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if ok, why := s.healthy(); !ok {
		http.Error(w, why, http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (s *Server) handleVersion(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"version": versionFor(s.opts.SimMetricsVersion)})
}

// modelCard is one entry of GET /v1/models.
type modelCard struct {
	ID          string  `json:"id"`
	Object      string  `json:"object"`
	Created     int64   `json:"created"`
	OwnedBy     string  `json:"owned_by"`
	Root        string  `json:"root"`
	Parent      *string `json:"parent"`
	MaxModelLen int     `json:"max_model_len"`
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	if !s.readyForAPI(w) {
		return
	}
	cards := make([]modelCard, 0, len(s.opts.ServedModelNames))
	for _, n := range s.opts.ServedModelNames {
		cards = append(cards, modelCard{ID: n, Object: "model", Created: s.created.Unix(), OwnedBy: "vllm", Root: s.opts.Model, MaxModelLen: s.cfg.MaxModelLen})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": cards})
}

// readyForAPI answers 503 while the server starts (a real vLLM would not
// accept the connection yet) and 500 once the engine is dead.
func (s *Server) readyForAPI(w http.ResponseWriter) bool {
	if !s.started() {
		writeError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "", "The server is still starting up (--sim-startup); poll /health until it answers 200.")
		return false
	}
	return true
}

// apiError is vLLM's error body: {"error":{"message","type","param","code"}}.
type apiError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    int     `json:"code"`
}

func newAPIError(status int, typ, param, msg string) apiError {
	e := apiError{Message: msg, Type: typ, Code: status}
	if param != "" {
		e.Param = &param
	}
	return e
}

func writeError(w http.ResponseWriter, status int, typ, param, msg string) {
	writeJSON(w, status, map[string]apiError{"error": newAPIError(status, typ, param, msg)})
}

func badRequest(w http.ResponseWriter, param, format string, a ...any) {
	writeError(w, http.StatusBadRequest, "BadRequestError", param, fmt.Sprintf(format, a...))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encode response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// streamOptions is OpenAI's stream_options plus vLLM's continuous_usage_stats.
type streamOptions struct {
	IncludeUsage         bool `json:"include_usage"`
	ContinuousUsageStats bool `json:"continuous_usage_stats"`
}

// samplingParams are the request fields shared by both endpoints. Fields the
// simulator does not model (top_p, top_k, stop, seed, ...) are accepted and
// ignored, as vLLM ignores unknown fields.
type samplingParams struct {
	Model               string         `json:"model"`
	Stream              bool           `json:"stream"`
	StreamOptions       *streamOptions `json:"stream_options"`
	MaxTokens           *int           `json:"max_tokens"`
	MaxCompletionTokens *int           `json:"max_completion_tokens"`
	MinTokens           *int           `json:"min_tokens"`
	IgnoreEOS           bool           `json:"ignore_eos"`
	Temperature         *float64       `json:"temperature"`
	N                   *int           `json:"n"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type chatRequest struct {
	samplingParams
	Messages []chatMessage `json:"messages"`
}

type completionRequest struct {
	samplingParams
	Prompt json.RawMessage `json:"prompt"`
}

// genKind is the endpoint of a generation request.
type genKind int

const (
	kindChat genKind = iota
	kindCompletion
)

// genRequest is a validated, tokenized request.
type genRequest struct {
	kind      genKind
	id        string
	model     string
	prompt    []int32
	maxTokens int
	minTokens int
	ignoreEOS bool
	stream    bool
	usage     bool // stream_options.include_usage
	contUsage bool // stream_options.continuous_usage_stats
	faults    requestFaults
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	arrival := time.Now()
	var req chatRequest
	if !decodeBody(w, r, &req) {
		return
	}
	if len(req.Messages) == 0 {
		badRequest(w, "messages", "messages must be a non-empty list of {\"role\": ..., \"content\": ...} objects.")
		return
	}
	var prompt []int32
	for i, m := range req.Messages {
		text, err := messageText(m.Content)
		if err != nil {
			badRequest(w, "messages", "messages[%d].content: %v", i, err)
			return
		}
		prompt = append(prompt, Tokenize(text)...)
	}
	s.generate(w, r, arrival, kindChat, req.samplingParams, prompt)
}

// messageText returns a message's text: a string, null, or a list of
// content parts of which the "text" parts count.
func messageText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("want a string or a list of {\"type\": \"text\", \"text\": ...} parts")
	}
	texts := make([]string, 0, len(parts))
	for j, p := range parts {
		if p.Type != "text" {
			return "", fmt.Errorf("part %d has type %q: vllm-sim only takes \"text\" parts", j, p.Type)
		}
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, " "), nil
}

func (s *Server) handleCompletions(w http.ResponseWriter, r *http.Request) {
	arrival := time.Now()
	var req completionRequest
	if !decodeBody(w, r, &req) {
		return
	}
	prompt, err := completionPrompt(req.Prompt)
	if err != nil {
		badRequest(w, "prompt", "prompt: %v", err)
		return
	}
	s.generate(w, r, arrival, kindCompletion, req.samplingParams, prompt)
}

// completionPrompt accepts a string, a list of token ids, or a one-element
// list of either.
func completionPrompt(raw json.RawMessage) ([]int32, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errors.New("missing: give a string or a list of token ids")
	}
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		return Tokenize(text), nil
	}
	var ids []int64
	if err := json.Unmarshal(raw, &ids); err == nil {
		return checkIDs(ids)
	}
	var texts []string
	if err := json.Unmarshal(raw, &texts); err == nil {
		if len(texts) != 1 {
			return nil, fmt.Errorf("got %d prompts: vllm-sim takes one prompt per request", len(texts))
		}
		return Tokenize(texts[0]), nil
	}
	var idLists [][]int64
	if err := json.Unmarshal(raw, &idLists); err == nil {
		if len(idLists) != 1 {
			return nil, fmt.Errorf("got %d prompts: vllm-sim takes one prompt per request", len(idLists))
		}
		return checkIDs(idLists[0])
	}
	return nil, errors.New("want a string, a list of token ids, or a one-element list of either")
}

func checkIDs(ids []int64) ([]int32, error) {
	out := make([]int32, len(ids))
	for i, id := range ids {
		if id < 0 || id >= VocabSize {
			return nil, fmt.Errorf("token id %d at position %d is outside the vocabulary [0, %d)", id, i, VocabSize)
		}
		out[i] = int32(id)
	}
	return out, nil
}

func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		badRequest(w, "", "read request body: %v", err)
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		badRequest(w, "", "request body is not valid JSON for this endpoint: %v", err)
		return false
	}
	return true
}

// generate validates the sampling parameters, applies faults and runs the
// request on the engine, answering as a stream or as one JSON body. arrival
// is when the request came in (the engine's queue time starts there).
func (s *Server) generate(w http.ResponseWriter, r *http.Request, arrival time.Time, kind genKind, p samplingParams, prompt []int32) {
	if !s.readyForAPI(w) {
		return
	}
	g := genRequest{kind: kind, prompt: prompt, stream: p.Stream, ignoreEOS: p.IgnoreEOS}
	g.model = p.Model
	if g.model == "" {
		g.model = s.opts.ServedModelNames[0]
	} else if !s.serves(g.model) {
		writeError(w, http.StatusNotFound, "NotFoundError", "model", fmt.Sprintf("The model `%s` does not exist.", p.Model))
		return
	}
	if p.N != nil && *p.N != 1 {
		badRequest(w, "n", "n must be 1 in vllm-sim, got %d.", *p.N)
		return
	}
	if p.Temperature != nil && *p.Temperature < 0 {
		badRequest(w, "temperature", "temperature must be non-negative, got %g.", *p.Temperature)
		return
	}
	if p.StreamOptions != nil && !p.Stream {
		badRequest(w, "stream_options", "Stream options can only be defined when `stream=True`.")
		return
	}
	if p.StreamOptions != nil {
		g.usage, g.contUsage = p.StreamOptions.IncludeUsage, p.StreamOptions.ContinuousUsageStats
	}
	maxTok := p.MaxTokens
	if p.MaxCompletionTokens != nil {
		maxTok = p.MaxCompletionTokens
	}
	// bound is the most tokens the request may generate: max_tokens, or
	// by vLLM's default whatever the context leaves (the engine applies that
	// default itself when maxTokens is 0, and reports prompts that are too
	// long or empty with vLLM's messages).
	bound := s.cfg.MaxModelLen - len(prompt)
	switch {
	case maxTok != nil && *maxTok < 1:
		badRequest(w, "max_tokens", "max_tokens must be at least 1, got %d.", *maxTok)
		return
	case maxTok != nil:
		g.maxTokens = *maxTok
		bound = *maxTok
	}
	if p.MinTokens != nil {
		if *p.MinTokens < 0 {
			badRequest(w, "min_tokens", "min_tokens must be greater than or equal to 0, got %d.", *p.MinTokens)
			return
		}
		if maxTok != nil && *p.MinTokens > *maxTok {
			badRequest(w, "min_tokens", "min_tokens must be less than or equal to max_tokens=%d, got %d.", *maxTok, *p.MinTokens)
			return
		}
		g.minTokens = *p.MinTokens
	}
	g.id = newID(kind)
	g.faults = s.faults.draw(max(1, bound))
	switch g.faults.status {
	case http.StatusInternalServerError:
		writeError(w, http.StatusInternalServerError, "InternalServerError", "", "Internal Server Error (injected by --sim-fault-500-rate)")
		return
	case http.StatusTooManyRequests:
		writeError(w, http.StatusTooManyRequests, "RateLimitError", "", "Too Many Requests (injected by --sim-fault-429-rate)")
		return
	}
	s.mu.Lock()
	dead, gen := s.dead, s.gen
	s.mu.Unlock()
	if dead {
		writeError(w, http.StatusInternalServerError, "InternalServerError", "", engineDeadMessage)
		return
	}

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if s.opts.LogRequests {
		s.log.infof("Received request %s: prompt_tokens=%d, max_tokens=%d, min_tokens=%d, ignore_eos=%t", g.id, len(prompt), g.maxTokens, g.minTokens, g.ignoreEOS)
	}
	ch, err := gen.eng.Submit(ctx, engine.Request{
		ID: g.id, PromptTokens: prompt, MaxTokens: g.maxTokens, MinTokens: g.minTokens,
		IgnoreEOS: g.ignoreEOS, Arrival: arrival,
	})
	if err != nil {
		status, typ, msg := engineErrorStatus(err)
		writeError(w, status, typ, "", msg)
		return
	}
	run := &genRun{s: s, w: w, g: g, ch: ch, ctx: ctx, cancel: cancel, created: arrival.Unix(), eos: gen.eos}
	if g.stream {
		run.stream()
	} else {
		run.whole()
	}
	// The engine's contract closes ch after the finished output; drain
	// whatever a cut connection left unread so that the engine never waits
	// on this request.
	cancel()
	for range ch {
	}
	run.markFinished()
	if s.opts.LogRequests {
		s.log.infof("Finished request %s: finish_reason=%s, completion_tokens=%d", g.id, run.finishReason, run.completion)
	}
}

// engineDeadMessage is vLLM's text for a request to a dead engine.
const engineDeadMessage = "EngineCore encountered an issue. See stack trace (above) for the root cause."

// engineErrorStatus maps an engine error to an HTTP status, error type and
// message.
func engineErrorStatus(err error) (int, string, string) {
	var re *engine.RequestError
	switch {
	case errors.As(err, &re):
		status := re.Status
		if status == 0 {
			status = http.StatusBadRequest
		}
		typ := "BadRequestError"
		if status >= 500 {
			typ = "InternalServerError"
		}
		return status, typ, re.Message
	case errors.Is(err, engine.ErrEngineDead):
		return http.StatusInternalServerError, "InternalServerError", engineDeadMessage
	case errors.Is(err, engine.ErrEngineClosed):
		return http.StatusServiceUnavailable, "ServiceUnavailableError", "The server is shutting down; retry on another replica or after it restarts."
	}
	return http.StatusInternalServerError, "InternalServerError", err.Error()
}

func (s *Server) serves(model string) bool {
	for _, n := range s.opts.ServedModelNames {
		if n == model {
			return true
		}
	}
	return false
}

func newID(kind genKind) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	if kind == kindChat {
		return "chatcmpl-" + hex.EncodeToString(b[:])
	}
	return "cmpl-" + hex.EncodeToString(b[:])
}

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

// genRun is one request's trip through the engine and back to the client.
type genRun struct {
	s       *Server
	w       http.ResponseWriter
	g       genRequest
	ch      <-chan engine.Output
	ctx     context.Context
	cancel  context.CancelFunc
	created int64
	eos     int32

	pending      []engine.Output // outputs read during a stall
	outputs      int             // outputs taken so far
	completion   int             // tokens taken so far
	cached       int
	sawOutput    bool // the first output (with the cached prompt tokens) was taken
	finishReason string
	finishedSeen bool
	counted      bool
}

// next returns the next engine output, applying the stall fault before the
// chosen output; ok is false once the channel is closed.
func (run *genRun) next() (engine.Output, bool) {
	if run.g.faults.stallAt > 0 && run.outputs+1 == run.g.faults.stallAt {
		run.stall()
	}
	var out engine.Output
	if len(run.pending) > 0 {
		out, run.pending = run.pending[0], run.pending[1:]
	} else {
		var ok bool
		out, ok = <-run.ch
		if !ok {
			return out, false
		}
	}
	run.outputs++
	if out.Finished {
		run.markFinished()
	}
	return out, true
}

// stall pauses the response for --sim-fault-stall while the engine goes on:
// outputs that arrive meanwhile are kept and sent after the pause.
func (run *genRun) stall() {
	t := time.NewTimer(run.s.opts.Faults.Stall)
	defer t.Stop()
	ch := run.ch
	for {
		select {
		case out, ok := <-ch:
			if !ok {
				ch = nil // closed: wait out the pause on the timer alone
				continue
			}
			run.pending = append(run.pending, out)
		case <-t.C:
			return
		case <-run.ctx.Done():
			return
		}
	}
}

// markFinished counts the request toward the restart and die faults, once.
func (run *genRun) markFinished() {
	if !run.counted {
		run.counted = true
		run.s.requestFinished()
	}
}

// disconnectNow reports whether the disconnect fault cuts the response
// before out: once disconnectAt outputs have gone out, or before the last
// one, whichever comes first.
func (run *genRun) disconnectNow(out engine.Output) bool {
	at := run.g.faults.disconnectAt
	return at > 0 && (run.outputs > at || out.Finished)
}

// cut aborts the engine request and drops the connection without ending
// the response, as a crashed proxy or server would.
func (run *genRun) cut() {
	run.cancel()
	if conn, _, err := http.NewResponseController(run.w).Hijack(); err == nil {
		_ = conn.Close()
		return
	}
	// A writer that cannot be hijacked (HTTP/2, a recorder): the response
	// just ends here, still without finish_reason, usage or [DONE].
}

// render is the text of an output's tokens. A request that stops on EOS
// ends with the EOS token, which is counted in completion_tokens but, as in
// vLLM, not rendered.
func (run *genRun) render(out engine.Output) string {
	toks := out.Tokens
	if out.Finished && out.FinishReason == "stop" && len(toks) > 0 && toks[len(toks)-1] == run.eos {
		toks = toks[:len(toks)-1]
	}
	return detokenize(toks)
}

func (run *genRun) usageNow() *usage {
	return &usage{
		PromptTokens: len(run.g.prompt), CompletionTokens: run.completion,
		TotalTokens:         len(run.g.prompt) + run.completion,
		PromptTokensDetails: &promptDetails{CachedTokens: run.cached},
	}
}

// Streamed chunk shapes.
type chatDelta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
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

// takeStep says what run.take found.
type takeStep int

const (
	stepOutput takeStep = iota // an output, already counted
	stepOver                   // the engine closed the request's channel
	stepCut                    // a disconnect fault cut the connection
	stepFailed                 // the engine failed the request (out.Err)
)

// take reads the engine's next output for either response form and does the
// bookkeeping both share: the disconnect fault, an engine error (finish
// reason "error"), the cached prompt tokens of the first output and the
// completion tokens of each.
func (run *genRun) take() (engine.Output, takeStep) {
	out, ok := run.next()
	switch {
	case !ok:
		return out, stepOver
	case run.disconnectNow(out):
		run.cut()
		return out, stepCut
	case out.Err != nil:
		run.finishReason = "error"
		return out, stepFailed
	}
	if !run.sawOutput {
		run.cached = out.CachedPromptTokens
		run.sawOutput = true
	}
	run.completion += len(out.Tokens)
	return out, stepOutput
}

// stream answers with server-sent events, one per engine output, flushed
// as soon as written.
func (run *genRun) stream() {
	w, g := run.w, run.g
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Request-Id", g.id)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	bw := bufio.NewWriter(w)
	// send buffers one event; flush puts what is buffered on the wire. Events
	// that are ready together (the role chunk and the first content, the last
	// content, usage and [DONE]) go out in one write, as one engine step's
	// output does from vLLM's API server.
	send := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			b = []byte(`{"error":{"message":"encode chunk failed","type":"InternalServerError","param":null,"code":500}}`)
		}
		_, _ = bw.WriteString("data: ")
		_, _ = bw.Write(b)
		_, _ = bw.WriteString("\n\n")
	}
	flush := func() {
		_ = bw.Flush()
		_ = rc.Flush()
	}
	object := "chat.completion.chunk"
	if g.kind == kindCompletion {
		object = "text_completion"
	}
	mk := func(choices any) chunk {
		c := chunk{ID: g.id, Object: object, Created: run.created, Model: g.model, Choices: choices}
		if g.contUsage {
			c.Usage = run.usageNow()
		}
		return c
	}
	first := true
	for {
		out, step := run.take()
		if step == stepCut {
			return
		}
		if step == stepFailed {
			status, typ, msg := engineErrorStatus(out.Err)
			send(map[string]apiError{"error": newAPIError(status, typ, "", msg)})
			break
		}
		if step == stepOver {
			break
		}
		if first && g.kind == kindChat {
			// vLLM's first chat chunk carries only the role.
			empty := ""
			saved := run.completion
			run.completion = 0
			send(mk([]chatChunkChoice{{Delta: chatDelta{Role: "assistant", Content: &empty}}}))
			run.completion = saved
		}
		first = false
		var fr *string
		if out.Finished {
			reason := out.FinishReason
			run.finishReason = reason
			fr = &reason
		}
		text := run.render(out)
		if len(out.Tokens) == 0 && fr == nil {
			continue
		}
		if g.kind == kindChat {
			send(mk([]chatChunkChoice{{Delta: chatDelta{Content: &text}, FinishReason: fr}}))
		} else {
			send(mk([]completionChoice{{Text: text, FinishReason: fr}}))
		}
		if out.Finished {
			break
		}
		flush()
	}
	if run.finishReason == "" {
		flush()
		return // the client went away: nothing left to tell it
	}
	if g.usage && run.finishReason != "error" {
		u := run.usageNow()
		c := chunk{ID: g.id, Object: object, Created: run.created, Model: g.model, Choices: []struct{}{}, Usage: u}
		send(c)
	}
	_, _ = bw.WriteString("data: [DONE]\n\n")
	flush()
}

// whole answers with one JSON body once the request has finished.
func (run *genRun) whole() {
	g := run.g
	var text strings.Builder
	for {
		out, step := run.take()
		if step == stepCut {
			return
		}
		if step == stepFailed {
			status, typ, msg := engineErrorStatus(out.Err)
			writeError(run.w, status, typ, "", msg)
			return
		}
		if step == stepOver {
			break
		}
		text.WriteString(run.render(out))
		if out.Finished {
			run.finishReason = out.FinishReason
			break
		}
	}
	if run.finishReason == "" {
		if run.ctx.Err() == nil {
			writeError(run.w, http.StatusInternalServerError, "InternalServerError", "", "the engine ended the request without a finished output")
		}
		return
	}
	reason := run.finishReason
	resp := map[string]any{
		"id": g.id, "created": run.created, "model": g.model, "usage": run.usageNow(),
	}
	if g.kind == kindChat {
		resp["object"] = "chat.completion"
		resp["choices"] = []map[string]any{{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": text.String(), "tool_calls": []any{}},
			"logprobs":      nil,
			"finish_reason": reason,
			"stop_reason":   nil,
		}}
	} else {
		resp["object"] = "text_completion"
		resp["choices"] = []map[string]any{{
			"index": 0, "text": text.String(), "logprobs": nil, "finish_reason": reason, "stop_reason": nil,
		}}
	}
	writeJSON(run.w, http.StatusOK, resp)
}
