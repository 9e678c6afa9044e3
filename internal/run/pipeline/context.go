package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/request/workload"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
)

// ContextError is a point whose longest request does not fit the context
// length the server reports (max_model_len on /v1/models): every such
// request would be refused, so Run sends none and says so with the
// numbers. The prompt's length (Longest.PromptWords) is the server's own
// count when it serves /tokenize, else the request's words.
type ContextError struct {
	Point       string // the scenario and point ("long-prefill-mix/conc=16")
	Model       string
	Longest     workload.Longest
	MaxModelLen int
}

func (e *ContextError) Error() string {
	return fmt.Sprintf("point %s cannot fit: its longest request (class %s) needs %d prompt + %d output = %d tokens, more than the %d the server accepts for %s (max_model_len on /v1/models); no request was sent: serve a longer context (vLLM --max-model-len) or shorten the scenario",
		e.Point, e.Longest.Class, e.Longest.PromptWords, e.Longest.MaxTokens, e.Longest.Tokens(), e.MaxModelLen, e.Model)
}

// fitsContext compares the point's longest request with the server's
// context length for model: a *ContextError when it does not fit, another
// error when the length could not be read (a server that lists no length
// is not an error: the requests then say for themselves).
func fitsContext(ctx context.Context, client *openai.Client, model string, p scenario.Point, l workload.Longest) error {
	n, ok, err := client.MaxModelLen(ctx, model)
	switch {
	case err != nil:
		return fmt.Errorf("the requests' length was not checked against the server's context length: %w", err)
	case !ok:
		return nil
	}
	if l.Tokens() > n {
		name := p.Key
		if p.Scenario != nil {
			name = strings.TrimSuffix(p.Scenario.Name+"/"+p.Key, "/")
		}
		return &ContextError{Point: name, Model: model, Longest: l, MaxModelLen: n}
	}
	return nil
}

// tooLongByWords is the ContextError of a mix whose longest request does
// not fit the server's context by its words alone (one token a word, a
// lower bound: a word is at least one token), nil otherwise or when the
// context length is not known: checked before the prompts are measured
// on /tokenize, so that an absurd --prompt-tokens is refused at once
// instead of being tokenized first.
func tooLongByWords(ctx context.Context, client *openai.Client, model string, p scenario.Point, mix *workload.Mix) *ContextError {
	var ce *ContextError
	if errors.As(fitsContext(ctx, client, model, p, mix.Longest()), &ce) {
		return ce
	}
	return nil
}
