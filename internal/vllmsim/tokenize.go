package vllmsim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// tokenizeRequest is vLLM's POST /tokenize body, either form
// (vllm/entrypoints/openai/protocol.py TokenizeCompletionRequest and
// TokenizeChatRequest): a prompt, or chat messages. add_special_tokens,
// add_generation_prompt and continue_final_message are accepted and change
// nothing: the simulator's tokenizer has no special tokens and no chat
// template, so the count is what a generation request's prompt_tokens is.
type tokenizeRequest struct {
	Model                *string       `json:"model"`
	Prompt               *string       `json:"prompt"`
	Messages             []chatMessage `json:"messages"`
	AddSpecialTokens     *bool         `json:"add_special_tokens"`
	AddGenerationPrompt  *bool         `json:"add_generation_prompt"`
	ContinueFinalMessage *bool         `json:"continue_final_message"`
	ReturnTokenStrs      bool          `json:"return_token_strs"`
}

// tokenizeResponse is vLLM's TokenizeResponse.
type tokenizeResponse struct {
	Count       int      `json:"count"`
	MaxModelLen int      `json:"max_model_len"`
	Tokens      []int32  `json:"tokens"`
	TokenStrs   []string `json:"token_strs,omitempty"`
}

// handleTokenize serves POST /tokenize with the served model's tokenizer:
// the token ids a generation request with the same prompt or messages
// would be given, their count and the context length.
func (s *Server) handleTokenize(w http.ResponseWriter, r *http.Request) {
	body, aerr := readBody(w, r)
	if aerr != nil {
		aerr.write(w)
		return
	}
	var req tokenizeRequest
	if err := json.Unmarshal(body, &req); err != nil {
		badRequest("", "request body is not valid JSON for /tokenize: %v", err).write(w)
		return
	}
	if !s.readyForAPI(w) {
		return
	}
	if req.Model != nil && *req.Model != "" && !slices.Contains(s.modelNames(), *req.Model) {
		newAPIError(http.StatusNotFound, "NotFoundError", "model", fmt.Sprintf("The model `%s` does not exist.", *req.Model)).write(w)
		return
	}
	var texts []string
	switch {
	case (req.Prompt == nil) == (req.Messages == nil):
		badRequest("", "give exactly one of prompt (a string) and messages (a chat)").write(w)
		return
	case req.Prompt != nil:
		texts = []string{*req.Prompt}
	default:
		if texts, aerr = chatTexts(req.Messages); aerr != nil {
			aerr.write(w)
			return
		}
	}
	resp := tokenizeResponse{MaxModelLen: s.info.Config.MaxModelLen, Tokens: []int32{}}
	for _, text := range texts {
		resp.Tokens = append(resp.Tokens, s.tok.Tokenize(text)...)
		if req.ReturnTokenStrs {
			resp.TokenStrs = append(resp.TokenStrs, strings.Fields(text)...)
		}
	}
	resp.Count = len(resp.Tokens)
	writeJSON(w, http.StatusOK, resp)
}
