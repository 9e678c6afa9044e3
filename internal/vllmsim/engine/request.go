package engine

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Request is one generation request, already tokenized.
type Request struct {
	ID           string
	PromptTokens []int32 // ids in [0, vocab)
	MaxTokens    int     // 0 = absent: vLLM's default, max_model_len − len(prompt)
	MinTokens    int     // no EOS before this many tokens
	IgnoreEOS    bool    // generate exactly MaxTokens (finish "length")
	// Greedy marks a request decoded greedily (temperature 0): its output
	// tokens, EOS and speculative acceptance are the model's answer to its
	// prompt, the same on every server start, as greedy decoding is on a
	// GPU. Otherwise they are sampled, seeded by Config.Seed as well.
	Greedy bool
	// Guided marks a structured-output request: every step it decodes in
	// pays Config.GuidedOverhead, and it ends with EOS ("stop") after
	// StopAfter tokens, when its grammar is complete (MaxTokens first:
	// "length").
	Guided    bool
	StopAfter int
	// Chat marks a request of the chat completions endpoint: the API
	// server parses its messages and renders the chat template before
	// tokenizing, FrontendPreset.ChatRequest more input work than a
	// completion's.
	Chat bool
	// Pooling marks a pooling request (/v1/embeddings): it ends when its
	// prompt is computed, with no token (pooling.go).
	Pooling bool
	// EncoderPatches are the vision encoder's patches of the request's
	// images (their placeholder tokens are in PromptTokens): the step that
	// first schedules the request runs the encoder on them (vision.go).
	EncoderPatches int
	// LoRA is the adapter the request asks for (a LoRAConfig.LoRAModules
	// name); "" for the base model.
	LoRA string
	// Arrival is when the API server received the request (queue time starts here).
	Arrival time.Time
}

// Output is one engine step's result for one request, sent on the channel
// Submit returns. The channel is closed after the output with Finished set.
type Output struct {
	// Tokens are the new tokens of this step: one, or several with speculative decoding.
	Tokens []int32
	// Finished is set on the request's last output.
	Finished bool
	// FinishReason is "stop", "length" or "abort" on the last output. With
	// "stop" the last token is the model's EOS id (Info.EOSTokenID); vLLM counts
	// it in completion_tokens but does not detokenize it.
	FinishReason string
	// CachedPromptTokens is how many prompt tokens came from the prefix cache
	// (set on the first output).
	CachedPromptTokens int
	// Err ends the request with an error (engine dead, aborted by shutdown).
	Err error
}

// ErrEngineDead is returned by Submit, and set on in-flight outputs, once the
// engine has been killed (vLLM's EngineDeadError).
var ErrEngineDead = errors.New("engine dead: EngineCore encountered an issue")

// ErrEngineClosed is set on the outputs of requests still in flight when
// Close is called, and returned by Submit afterwards.
var ErrEngineClosed = errors.New("engine closed: the server is shutting down")

// errNeverFits ends a request that cannot be scheduled even with the whole
// KV cache to itself.
var errNeverFits = errors.New("request cannot be scheduled: it needs more KV cache blocks than the engine has")

// RequestError is a request the engine refuses (HTTP Status with vLLM's
// Message, e.g. 400 for a request longer than max_model_len).
type RequestError struct {
	Status  int
	Message string
}

func (e *RequestError) Error() string { return fmt.Sprintf("%d: %s", e.Status, e.Message) }

// badRequest is a 400 RequestError with vLLM's message.
func badRequest(format string, a ...any) *RequestError {
	return &RequestError{Status: http.StatusBadRequest, Message: fmt.Sprintf(format, a...)}
}

// CheckMaxTokens is vLLM's rule for a max_tokens the client gave (its
// SamplingParams check): at least 1. Request.MaxTokens cannot say "given as
// 0" (0 there means absent), so an API server applies this rule to the
// value it received; Check applies it to a negative Request.MaxTokens.
func CheckMaxTokens(n int) error {
	if n < 1 {
		return badRequest("max_tokens must be at least 1, got %d.", n)
	}
	return nil
}

// checkRequest applies vLLM's request checks (SamplingParams and
// serving_engine._validate_input, word for word) against a context of
// maxLen tokens and a vocabulary of vocab ids, and fills vLLM's default
// MaxTokens. The length checks cannot overflow: MaxTokens may be as large
// as an int holds.
func checkRequest(req *Request, maxLen, vocab int) error {
	n := len(req.PromptTokens)
	if n == 0 {
		return badRequest("The decoder prompt cannot be empty")
	}
	if req.Pooling {
		return checkPooling(req, maxLen, vocab)
	}
	if req.MaxTokens != 0 {
		if err := CheckMaxTokens(req.MaxTokens); err != nil {
			return err
		}
	}
	if req.MinTokens < 0 {
		return badRequest("min_tokens must be greater than or equal to 0, got %d.", req.MinTokens)
	}
	if req.MaxTokens == 0 { // max_tokens absent
		if n >= maxLen {
			return badRequest("This model's maximum context length is %d tokens. However, you requested %d tokens in the messages, Please reduce the length of the messages.", maxLen, n)
		}
		req.MaxTokens = maxLen - n // vLLM's default
	}
	if n > maxLen || req.MaxTokens > maxLen-n {
		// n + MaxTokens may not fit an int; as unsigned it always does.
		total := uint64(n) + uint64(req.MaxTokens)
		return badRequest("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.", maxLen, total, n, req.MaxTokens)
	}
	if req.MinTokens > req.MaxTokens {
		return badRequest("min_tokens must be less than or equal to max_tokens=%d, got %d.", req.MaxTokens, req.MinTokens)
	}
	for _, t := range req.PromptTokens {
		if t < 0 || int(t) >= vocab {
			return OutOfVocabulary(int64(t), vocab)
		}
	}
	return nil
}

// OutOfVocabulary is the 400 for a prompt token id outside a vocabulary of
// vocab ids, in vLLM's words. Check returns it; an API server that reads
// ids too large for a Request (beyond int32) answers it too.
func OutOfVocabulary(id int64, vocab int) error {
	return badRequest("Token id %d is out of vocabulary (vocab size %d)", id, vocab)
}
