package vllmsim

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// maxBodyBytes bounds a request body.
const maxBodyBytes = 32 << 20

// routeList names the routes, for the start-up log and 404 answers.
const routeList = "/health, /ping, /version, /metrics, /tokenize, /v1/models, /v1/chat/completions, /v1/completions, /v1/embeddings, /rerank, /v1/rerank, /v2/rerank, /score, /v1/score"

// routes builds the HTTP API: vLLM's OpenAI-compatible endpoints.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", s.handleHealth)
	mux.HandleFunc("GET /ping", s.handleHealth)
	mux.HandleFunc("POST /ping", s.handleHealth)
	mux.HandleFunc("GET /version", s.handleVersion)
	mux.HandleFunc("GET /metrics", s.handleMetrics)
	mux.HandleFunc("GET /v1/models", s.handleModels)
	mux.HandleFunc("POST /tokenize", s.handleTokenize)
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { s.generate(w, r, kindChat, parseChat) })
	mux.HandleFunc("POST /v1/completions", func(w http.ResponseWriter, r *http.Request) { s.generate(w, r, kindCompletion, parseCompletion) })
	mux.HandleFunc("POST /v1/embeddings", s.handleEmbeddings)
	s.scoreRoutes(mux) // rerank.go
	s.profileRoutes(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "NotFoundError", "", fmt.Sprintf("%s %s is not served by vllm-sim (routes: %s)", r.Method, r.URL.Path, routeList))
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
	writeJSON(w, http.StatusOK, map[string]string{"version": s.version()})
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
	cfg := s.info.Config
	cards := make([]modelCard, 0, len(cfg.ServedNames()))
	for _, n := range cfg.ServedNames() {
		cards = append(cards, modelCard{ID: n, Object: "model", Created: s.created.Unix(), OwnedBy: "vllm", Root: cfg.Model, MaxModelLen: cfg.MaxModelLen})
	}
	cards = append(cards, s.adapterCards()...)
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": cards})
}

// handleMetrics serves the current generation's registry in the Prometheus
// text format, with the /metrics faults applied.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	if !s.waitMetricsDelay(r.Context()) {
		return
	}
	gen := s.current()
	if s.opts.Faults.MetricsBroken {
		writeBrokenMetrics(w, gen.gather, s.info.ModelName)
		return
	}
	// Always the text format (vLLM's prometheus_client never negotiates
	// protobuf): a client asking for protobuf still gets text.
	r2 := r.Clone(r.Context())
	r2.Header.Set("Accept", "text/plain; version=0.0.4")
	r2.Header.Del("Accept-Encoding")
	gen.metrics.ServeHTTP(w, r2)
}

// readyForAPI answers 503 while the server starts (a real vLLM would not
// accept the connection yet).
func (s *Server) readyForAPI(w http.ResponseWriter) bool {
	if !s.started() {
		writeError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "", "The server is still starting up (--sim-startup); poll /health until it answers 200.")
		return false
	}
	return true
}

// readBody reads a request body of at most maxBodyBytes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		return nil, badRequest("", "read request body: %v", err)
	}
	return body, nil
}

// generate serves a generation request: parse and check it, apply the
// request faults, run it on the engine and answer as a stream or as one
// JSON body. Its queue time starts on arrival.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, kind genKind, parse parseFunc) {
	arrival := time.Now()
	if aerr := s.unsupported(false, apiName(kind)); aerr != nil {
		aerr.write(w)
		return
	}
	body, aerr := readBody(w, r)
	var req genRequest
	if aerr == nil {
		req, aerr = parse(body, s.modelNames(), s.tok)
	}
	var mm images
	if aerr == nil && kind == kindChat {
		mm, aerr = s.parseImages(body)
		req.prompt = append(req.prompt, mm.tokens...)
	}
	if aerr != nil {
		aerr.write(w)
		return
	}
	if !s.readyForAPI(w) {
		return
	}
	gen, dead := s.state()
	id := newID(kind)
	ereq := req.engineRequest(id)
	ereq.Arrival = arrival
	ereq.LoRA = s.adapterOf(req.model)
	ereq.EncoderPatches = mm.patches
	if err := gen.eng.Check(ereq); err != nil {
		engineError(err).write(w)
		return
	}
	faults := s.faults.draw(max(1, s.maxOutputs(req)))
	if faults.reject(w) {
		return
	}
	if dead {
		writeError(w, http.StatusInternalServerError, "InternalServerError", "", engineDeadMessage)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if s.opts.LogRequests {
		s.log.infof("Received request %s: prompt_tokens=%d, max_tokens=%d, min_tokens=%d, ignore_eos=%t", id, len(req.prompt), req.maxTokens, req.minTokens, req.ignoreEOS)
	}
	ch, err := gen.eng.Submit(ctx, ereq)
	if err != nil {
		engineError(err).write(w)
		return
	}
	resp := &response{w: w, req: req, id: id, created: arrival.Unix(), eos: gen.eos,
		out:  &outputStream{ch: ch, ctx: ctx, cancel: cancel, w: w, faults: faults, finished: s.requestFinished},
		salt: newOutputSalt(s.opts.OutputSalt, req, s.info.VocabSize, gen.eos), think: s.thinkingFor(req)}
	if req.stream {
		resp.stream()
	} else {
		resp.whole()
	}
	resp.out.close()
	if s.opts.LogRequests {
		s.log.infof("Finished request %s: finish_reason=%s, completion_tokens=%d", id, resp.finishReason, resp.completion)
	}
}

// maxOutputs is the most tokens req may generate: max_tokens, or by vLLM's
// default whatever the context leaves.
func (s *Server) maxOutputs(req genRequest) int {
	if req.maxTokens > 0 {
		return req.maxTokens
	}
	return s.info.Config.MaxModelLen - len(req.prompt)
}

func newID(kind genKind) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	if kind == kindChat {
		return "chatcmpl-" + hex.EncodeToString(b[:])
	}
	return "cmpl-" + hex.EncodeToString(b[:])
}
