package vllmsim

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
	"github.com/vllmperf/vllmperf/internal/vllmsim/tokenizer"
)

// The embeddings API follows vLLM 0.11 (commit 005a810bc40f,
// vllm/entrypoints/openai/serving_embedding.py and api_server.py): POST
// /v1/embeddings with input (a string, a list of strings, a list of token
// ids or a list of such lists) answers a list of {"object": "embedding",
// "index", "embedding"} and usage with prompt_tokens; encoding_format
// "base64" packs each vector as little-endian float32. A model without the
// pooling runner answers 400 "The model does not support Embeddings API",
// and a pooling model answers the generation endpoints the same way.

// embeddingRequest is a /v1/embeddings body.
type embeddingRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
	Dimensions     *int            `json:"dimensions"`
}

// embeddingData is one input's vector.
type embeddingData struct {
	Index     int    `json:"index"`
	Object    string `json:"object"`
	Embedding any    `json:"embedding"`
}

// unsupported is vLLM's answer to an endpoint the model's runner does
// not serve; nil when it does.
func (s *Server) unsupported(pooling bool, api string) *apiError {
	if s.info.Config.PoolingModel() == pooling {
		return nil
	}
	return badRequest("", "The model does not support %s API", api)
}

// handleEmbeddings serves POST /v1/embeddings: every input is a pooling
// request on the engine, run side by side; the answer comes when all are
// done.
func (s *Server) handleEmbeddings(w http.ResponseWriter, r *http.Request) {
	arrival := time.Now()
	if aerr := s.unsupported(true, "Embeddings"); aerr != nil {
		aerr.write(w)
		return
	}
	body, aerr := readBody(w, r)
	var req embeddingRequest
	var prompts [][]int32
	if aerr == nil {
		req, prompts, aerr = s.parseEmbedding(body)
	}
	if aerr != nil {
		aerr.write(w)
		return
	}
	if !s.readyForAPI(w) {
		return
	}
	gen, dead := s.state()
	if dead {
		writeError(w, http.StatusInternalServerError, "InternalServerError", "", engineDeadMessage)
		return
	}
	total, err := s.pool(r.Context(), gen.eng, prompts, arrival)
	if err != nil {
		engineError(err).write(w)
		return
	}
	data := make([]embeddingData, len(prompts))
	for i, p := range prompts {
		data[i] = embeddingData{Index: i, Object: "embedding", Embedding: encodeVector(embedVector(p, s.embedDims(req)), req.EncodingFormat)}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": "embd-" + newID(kindCompletion)[len("cmpl-"):], "object": "list", "created": arrival.Unix(), "model": req.Model, "data": data,
		"usage": map[string]any{"prompt_tokens": total, "total_tokens": total, "completion_tokens": 0, "prompt_tokens_details": nil},
	})
	s.requestFinished()
}

// parseEmbedding reads and checks a /v1/embeddings body, tokenizing its
// inputs.
func (s *Server) parseEmbedding(body []byte) (embeddingRequest, [][]int32, *apiError) {
	var req embeddingRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return req, nil, badRequest("", "request body is not valid JSON for this endpoint: %v", err)
	}
	if req.Model == "" {
		req.Model = s.info.Config.ModelName()
	} else if !slices.Contains(s.modelNames(), req.Model) {
		return req, nil, newAPIError(http.StatusNotFound, "NotFoundError", "model", "The model `"+req.Model+"` does not exist.")
	}
	switch req.EncodingFormat {
	case "", "float", "base64":
	default:
		return req, nil, badRequest("encoding_format", "encoding_format must be 'float' or 'base64', got '%s'.", req.EncodingFormat)
	}
	if d := req.Dimensions; d != nil && (*d < 1 || *d > s.info.Model.Hidden) {
		return req, nil, badRequest("dimensions", "dimensions must be from 1 to the model's %d, got %d.", s.info.Model.Hidden, *d)
	}
	prompts, aerr := embeddingInputs(req.Input, s.tok)
	if aerr != nil {
		return req, nil, aerr
	}
	return req, prompts, nil
}

// embeddingInputs reads input: a string, a list of strings, a list of
// token ids, or a list of lists of ids.
func embeddingInputs(raw json.RawMessage, tok tokenizer.Tokenizer) ([][]int32, *apiError) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return [][]int32{tok.Tokenize(one)}, nil
	}
	var texts []string
	if json.Unmarshal(raw, &texts) == nil && len(texts) > 0 {
		out := make([][]int32, len(texts))
		for i, t := range texts {
			out[i] = tok.Tokenize(t)
		}
		return out, nil
	}
	var ids []int64
	if json.Unmarshal(raw, &ids) == nil && len(ids) > 0 {
		p, aerr := tokenIDs(ids, tok.Vocab())
		return [][]int32{p}, aerr
	}
	var lists [][]int64
	if json.Unmarshal(raw, &lists) == nil && len(lists) > 0 {
		out := make([][]int32, len(lists))
		for i, l := range lists {
			p, aerr := tokenIDs(l, tok.Vocab())
			if aerr != nil {
				return nil, aerr
			}
			out[i] = p
		}
		return out, nil
	}
	return nil, badRequest("input", "input: want a string, a list of strings, a list of token ids or a list of such lists")
}

// pool runs prompts as pooling requests side by side and returns their
// prompt tokens once all are done.
func (s *Server) pool(ctx context.Context, eng engine.Core, prompts [][]int32, arrival time.Time) (int, error) {
	chans := make([]<-chan engine.Output, 0, len(prompts))
	total := 0
	for _, p := range prompts {
		req := engine.Request{ID: newID(kindCompletion), PromptTokens: p, MaxTokens: 1, Pooling: true, Arrival: arrival}
		if err := eng.Check(req); err != nil {
			return 0, err
		}
		ch, err := eng.Submit(ctx, req)
		if err != nil {
			return 0, err
		}
		chans = append(chans, ch)
		total += len(p)
	}
	var firstErr error
	for _, ch := range chans {
		for out := range ch {
			if out.Err != nil && firstErr == nil {
				firstErr = out.Err
			}
		}
	}
	return total, firstErr
}

// embedDims is the vector's length: dimensions, else the hidden size.
func (s *Server) embedDims(req embeddingRequest) int {
	if req.Dimensions != nil {
		return *req.Dimensions
	}
	return s.info.Model.Hidden
}

// embedVector is a prompt's vector: unit length, a function of the
// prompt alone (the same input embeds the same on every start).
func embedVector(prompt []int32, dims int) []float32 {
	h := fnv.New64a()
	var b [4]byte
	for _, t := range prompt {
		binary.LittleEndian.PutUint32(b[:], uint32(t))
		_, _ = h.Write(b[:])
	}
	x := h.Sum64() | 1
	v := make([]float32, dims)
	var norm float64
	for i := range v {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		f := float64(int64(x>>11))/float64(1<<52) - 1
		v[i] = float32(f)
		norm += f * f
	}
	scale := float32(1 / math.Sqrt(max(norm, 1e-12)))
	for i := range v {
		v[i] *= scale
	}
	return v
}

// encodeVector is v as encoding_format asks: a list of floats, or base64
// of its little-endian float32 bytes.
func encodeVector(v []float32, format string) any {
	if format != "base64" {
		return v
	}
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// apiName is an endpoint's name in vLLM's "does not support" message.
func apiName(kind genKind) string {
	if kind == kindChat {
		return "Chat Completions"
	}
	return "Completions"
}
