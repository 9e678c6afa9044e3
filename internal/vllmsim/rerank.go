package vllmsim

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"time"
)

// Scoring follows vLLM 0.11 (commit 005a810bc40f, serving_score.py and
// api_server.py): POST /rerank (also /v1/rerank and /v2/rerank) takes a
// query and documents and answers each document's relevance_score, best
// first, top_n of them (0: all), with usage.total_tokens; POST /score
// (also /v1/score) takes text_1 and text_2 (a string or a list each; one
// text_1 is paired with every text_2) and answers a score per pair. On an
// embedding model (a bi-encoder, as the simulator's pooling presets are)
// vLLM embeds every text once, as a pooling request each, and scores a
// pair by the cosine of its embeddings. A generative model answers
// "The model does not support Score API".

// rerankRequest is a /rerank body.
type rerankRequest struct {
	Model     string   `json:"model"`
	Query     string   `json:"query"`
	Documents []string `json:"documents"`
	TopN      int      `json:"top_n"`
}

// scoreRequest is a /score body.
type scoreRequest struct {
	Model string          `json:"model"`
	Text1 json.RawMessage `json:"text_1"`
	Text2 json.RawMessage `json:"text_2"`
}

// scoreRoutes adds the scoring endpoints to mux.
func (s *Server) scoreRoutes(mux *http.ServeMux) {
	for _, p := range []string{"/rerank", "/v1/rerank", "/v2/rerank"} {
		mux.HandleFunc("POST "+p, s.handleRerank)
	}
	for _, p := range []string{"/score", "/v1/score"} {
		mux.HandleFunc("POST "+p, s.handleScore)
	}
}

func (s *Server) handleRerank(w http.ResponseWriter, r *http.Request) {
	var req rerankRequest
	texts, ok := s.readScoring(w, r, &req, func() ([]string, *apiError) {
		if len(req.Documents) == 0 {
			return nil, badRequest("documents", "documents must be a non-empty list of strings.")
		}
		if req.TopN < 0 {
			return nil, badRequest("top_n", "top_n must be 0 (all) or positive, got %d.", req.TopN)
		}
		return append([]string{req.Query}, req.Documents...), nil
	}, &req.Model)
	if !ok {
		return
	}
	vecs, total, ok := s.embedAll(w, r, texts)
	if !ok {
		return
	}
	type result struct {
		Index          int               `json:"index"`
		Document       map[string]string `json:"document"`
		RelevanceScore float64           `json:"relevance_score"`
	}
	results := make([]result, len(req.Documents))
	for i, d := range req.Documents {
		results[i] = result{Index: i, Document: map[string]string{"text": d}, RelevanceScore: cosine(vecs[0], vecs[i+1])}
	}
	sort.SliceStable(results, func(a, b int) bool { return results[a].RelevanceScore > results[b].RelevanceScore })
	if req.TopN > 0 && req.TopN < len(results) {
		results = results[:req.TopN]
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": "rerank-" + newID(kindCompletion)[len("cmpl-"):], "model": req.Model,
		"usage": map[string]int{"total_tokens": total}, "results": results})
}

func (s *Server) handleScore(w http.ResponseWriter, r *http.Request) {
	var req scoreRequest
	var t1, t2 []string
	texts, ok := s.readScoring(w, r, &req, func() ([]string, *apiError) {
		var aerr *apiError
		if t1, aerr = textList(req.Text1, "text_1"); aerr != nil {
			return nil, aerr
		}
		if t2, aerr = textList(req.Text2, "text_2"); aerr != nil {
			return nil, aerr
		}
		if len(t1) != 1 && len(t1) != len(t2) {
			return nil, badRequest("text_1", "text_1 has %d texts and text_2 %d: give one text_1, or as many as text_2.", len(t1), len(t2))
		}
		return slices.Concat(t1, t2), nil
	}, &req.Model)
	if !ok {
		return
	}
	vecs, total, ok := s.embedAll(w, r, texts)
	if !ok {
		return
	}
	type datum struct {
		Index  int     `json:"index"`
		Object string  `json:"object"`
		Score  float64 `json:"score"`
	}
	data := make([]datum, len(t2))
	for i := range t2 {
		q := vecs[0]
		if len(t1) > 1 {
			q = vecs[i]
		}
		data[i] = datum{Index: i, Object: "score", Score: cosine(q, vecs[len(t1)+i])}
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": "score-" + newID(kindCompletion)[len("cmpl-"):], "object": "list", "created": time.Now().Unix(), "model": req.Model,
		"data": data, "usage": map[string]any{"prompt_tokens": total, "total_tokens": total, "completion_tokens": 0, "prompt_tokens_details": nil}})
}

// readScoring checks the runner, reads the body into req, its model
// (*model; "" is the served name) and, with texts, the texts to embed;
// false when it has answered with an error.
func (s *Server) readScoring(w http.ResponseWriter, r *http.Request, req any, texts func() ([]string, *apiError), model *string) ([]string, bool) {
	if aerr := s.unsupported(true, "Score"); aerr != nil {
		aerr.write(w)
		return nil, false
	}
	body, aerr := readBody(w, r)
	if aerr == nil {
		if err := json.Unmarshal(body, req); err != nil {
			aerr = badRequest("", "request body is not valid JSON for this endpoint: %v", err)
		}
	}
	if aerr == nil {
		if *model == "" {
			*model = s.info.Config.ModelName()
		} else if !slices.Contains(s.modelNames(), *model) {
			aerr = newAPIError(http.StatusNotFound, "NotFoundError", "model", "The model `"+*model+"` does not exist.")
		}
	}
	var out []string
	if aerr == nil {
		out, aerr = texts()
	}
	if aerr != nil {
		aerr.write(w)
		return nil, false
	}
	return out, s.readyForAPI(w)
}

// embedAll runs every text as a pooling request and returns its vectors
// and the prompt tokens; false when it has answered with an error.
func (s *Server) embedAll(w http.ResponseWriter, r *http.Request, texts []string) ([][]float32, int, bool) {
	arrival := time.Now()
	prompts := make([][]int32, len(texts))
	for i, t := range texts {
		prompts[i] = s.tok.Tokenize(t)
	}
	gen, dead := s.state()
	if dead {
		writeError(w, http.StatusInternalServerError, "InternalServerError", "", engineDeadMessage)
		return nil, 0, false
	}
	total, err := s.pool(r.Context(), gen.eng, prompts, arrival)
	if err != nil {
		engineError(err).write(w)
		return nil, 0, false
	}
	vecs := make([][]float32, len(prompts))
	for i, p := range prompts {
		vecs[i] = embedVector(p, s.info.Model.Hidden)
	}
	s.requestFinished()
	return vecs, total, true
}

// textList reads a string or a non-empty list of strings.
func textList(raw json.RawMessage, param string) ([]string, *apiError) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil && len(many) > 0 {
		return many, nil
	}
	return nil, badRequest(param, "%s: want a string or a non-empty list of strings", param)
}

// cosine is the cosine similarity of two unit vectors.
func cosine(a, b []float32) float64 {
	var dot float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
	}
	return dot
}
