package config

import (
	"fmt"
	"slices"
	"strings"
)

// ReasoningParsers are the --reasoning-parser values vllm-sim models.
var ReasoningParsers = []string{"deepseek_r1", "qwen3"}

// DefaultReasoningShare is --sim-reasoning-share's default: half of a
// request's output budget goes to thinking.
const DefaultReasoningShare = 0.5

// ReasoningOptions are the reasoning flags.
type ReasoningOptions struct {
	// ReasoningParser is --reasoning-parser ("": off), one of
	// ReasoningParsers.
	ReasoningParser string
	// ReasoningShare is --sim-reasoning-share: the share of a request's
	// output budget (max_tokens, or what the context leaves) the model
	// spends thinking, tags included, in [0, 1].
	ReasoningShare float64
}

// reasoningFlags are the reasoning flags of the flag table.
var reasoningFlags = []flagSpec{
	{name: "reasoning-parser", meta: "{" + strings.Join(ReasoningParsers, ",") + "}", help: "stream a chat answer's thinking as delta.reasoning_content, the rest as content, as vLLM 0.11 does (default: off)",
		set: str(func(o *Options) *string { return &o.ReasoningParser })},
	{name: "sim-reasoning-share", meta: "F", help: fmt.Sprintf("with --reasoning-parser: share of each request's output budget spent thinking, 0 to 1 (default %g)", DefaultReasoningShare),
		set: floatVal(func(o *Options) *float64 { return &o.ReasoningShare })},
}

// validate refuses a parser vllm-sim does not model and a share outside [0, 1].
func (r ReasoningOptions) validate() error {
	if r.ReasoningParser != "" && !slices.Contains(ReasoningParsers, r.ReasoningParser) {
		return ArgErrorf("argument --reasoning-parser: invalid choice: '%s' (vllm-sim models %s)", r.ReasoningParser, strings.Join(ReasoningParsers, ", "))
	}
	if !(r.ReasoningShare >= 0 && r.ReasoningShare <= 1) {
		return ArgErrorf("argument --sim-reasoning-share: %g is outside [0, 1] (e.g. 0.5 spends half the output budget thinking)", r.ReasoningShare)
	}
	return nil
}
