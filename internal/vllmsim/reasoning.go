package vllmsim

import (
	"math"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
	"github.com/vllmperf/vllmperf/internal/vllmsim/tokenizer"
)

// Reasoning follows vLLM 0.11 (commit 005a810bc40f): with
// --reasoning-parser, a chat answer's thinking goes to the delta's (and
// the message's) reasoning_content field, its answer to content; the
// think tags themselves are in neither, and a streamed step that carried
// only a tag sends no chunk (the parser returns no delta). Later vLLM
// releases rename the field reasoning. Qwen3's model writes <think> itself;
// DeepSeek-R1's chat template puts it in the prompt, so its output starts
// thinking at once. Qwen3 with chat_template_kwargs {"enable_thinking":
// false} writes no thinking at all.

// thinkingFields are the chat request fields that turn thinking off.
type thinkingFields struct {
	ChatTemplateKwargs struct {
		EnableThinking *bool `json:"enable_thinking"`
	} `json:"chat_template_kwargs"`
}

// thinkOff reports whether the request turned thinking off.
func (t thinkingFields) thinkOff() bool {
	e := t.ChatTemplateKwargs.EnableThinking
	return e != nil && !*e
}

// thinking lays out one answer's output positions: the open tag (if the
// model writes it), the thinking, then the close tag; the answer follows.
type thinking struct {
	openTag bool // position 0 is <think>
	end     int  // the position of </think>; thinking is [openTag?1:0, end)
}

// thinkingFor is req's layout under the server's parser; nil when its
// answer is all content (no parser, not a chat request, structured
// output, or thinking turned off).
func (s *Server) thinkingFor(req genRequest) *thinking {
	p := s.opts.ReasoningParser
	if p == "" || req.kind != kindChat || req.guided != nil || (p == "qwen3" && req.thinkOff) {
		return nil
	}
	budget := int(math.Ceil(s.opts.ReasoningShare * float64(s.maxOutputs(req))))
	if p == "qwen3" {
		return &thinking{openTag: true, end: max(1, budget-1)}
	}
	return &thinking{end: max(0, budget-1)}
}

// kind is what the token at position pos is: 't' a tag, 'r' thinking,
// 'a' answer.
func (t *thinking) kind(pos int) byte {
	switch {
	case t.openTag && pos == 0, pos == t.end:
		return 't'
	case pos < t.end:
		return 'r'
	}
	return 'a'
}

// split is the thinking and the answer text of tokens at positions start,
// start+1, ...
func (t *thinking) split(toks []int32, start int) (reasoning, answer string) {
	var r, a []int32
	for k, tok := range toks {
		switch t.kind(start + k) {
		case 'r':
			r = append(r, tok)
		case 'a':
			a = append(a, tok)
		}
	}
	return tokenizer.Detokenize(r), tokenizer.Detokenize(a)
}

// thinkingChunk is a streamed output's chunk under a reasoning parser;
// false when the step carried only a tag and no finish_reason (vLLM sends
// nothing then).
func (r *response) thinkingChunk(out engine.Output, finish *string) (chunk, bool) {
	reasoning, answer := r.think.split(r.visible(out), r.completion-len(out.Tokens))
	if reasoning == "" && answer == "" && finish == nil {
		return chunk{}, false
	}
	d := chatDelta{}
	if reasoning != "" {
		d.ReasoningContent = &reasoning
	}
	if answer != "" || reasoning == "" {
		d.Content = &answer
	}
	return r.chunk([]chatChunkChoice{{Delta: d, FinishReason: finish}}, r.completion), true
}

// outChunk is a streamed output's chunk, and whether to send it.
func (r *response) outChunk(out engine.Output, finish *string) (chunk, bool) {
	if r.think != nil {
		return r.thinkingChunk(out, finish)
	}
	return r.contentChunk(r.text(out), finish), true
}

// answerText is an output's answer text; its thinking, under a reasoning
// parser, goes to r.reasoning.
func (r *response) answerText(out engine.Output) string {
	if r.think == nil {
		return r.text(out)
	}
	reasoning, answer := r.think.split(r.visible(out), r.completion-len(out.Tokens))
	r.reasoning.WriteString(reasoning)
	return answer
}
