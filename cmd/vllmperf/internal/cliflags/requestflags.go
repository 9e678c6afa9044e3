package cliflags

import (
	"fmt"

	"github.com/vllmperf/vllmperf/internal/request/workload"
)

// RequestFlags are a command's request-shape flags (vllmperf run): one
// class of random-word prompts (package workload), with an optional
// system prompt shared by all.
type RequestFlags struct {
	PromptTokens       int
	SharedPrefixTokens int
	MaxTokens          int
}

// Class checks the flags and returns the class they describe, named name;
// each error names the flag and the fix.
func (o *RequestFlags) Class(name string) (workload.Class, error) {
	if err := o.checkTokenFlags(); err != nil {
		return workload.Class{}, err
	}
	switch {
	case o.PromptTokens < workload.UniqueWords:
		return workload.Class{}, fmt.Errorf("--prompt-tokens %d: want at least %d, the words that make each prompt unique", o.PromptTokens, workload.UniqueWords)
	case o.MaxTokens < 1:
		return workload.Class{}, fmt.Errorf("--max-tokens %d: want at least 1 completion token", o.MaxTokens)
	case o.SharedPrefixTokens < 0 || (o.SharedPrefixTokens > 0 && o.SharedPrefixTokens < workload.NonceWords):
		return workload.Class{}, fmt.Errorf("--shared-prefix-tokens %d: want 0 (no shared prompt) or at least %d", o.SharedPrefixTokens, workload.NonceWords)
	}
	return workload.Class{Name: name, Weight: 1, Config: workload.Config{
		PromptTokens:       o.PromptTokens,
		MaxTokens:          o.MaxTokens,
		IgnoreEOS:          true,
		SharedPrefixTokens: o.SharedPrefixTokens,
	}}, nil
}

// TooLong words a request that does not fit the server's context length
// (maxModelLen tokens for model) in the flags that make it.
func (o *RequestFlags) TooLong(maxModelLen int, model string) error {
	return fmt.Errorf("--prompt-tokens %d + --shared-prefix-tokens %d + --max-tokens %d = %d tokens, more than the %d the server accepts for %s (max_model_len on /v1/models): every request would fail; lower them",
		o.PromptTokens, o.SharedPrefixTokens, o.MaxTokens, o.PromptTokens+o.SharedPrefixTokens+o.MaxTokens, maxModelLen, model)
}
