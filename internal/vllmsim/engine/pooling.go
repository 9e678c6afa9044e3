package engine

import (
	"errors"
	"slices"
	"time"

	"github.com/vllmperf/vllmperf/internal/vllmsim/argcheck"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

// Pooling models follow vLLM 0.11 (commit 005a810bc40f): --runner
// {auto,generate,pooling} (auto picks pooling for an encoder such as
// BertModel) and the older --task, whose embedding tasks select the
// pooling runner. A pooling request is prefill only: it ends when its
// prompt's forward pass is done, with no token, counted in
// vllm:prompt_tokens_total and finished "stop".

// PoolingConfig are vllm serve's runner flags.
type PoolingConfig struct {
	// Runner is --runner, one of Runners ("": auto).
	Runner string
	// Task is the deprecated --task, one of Tasks ("": auto).
	Task string
}

// Runners are --runner's choices (vLLM's RunnerOption, less draft).
var Runners = []string{"auto", "generate", "pooling"}

// Tasks are --task's choices (vLLM's TaskOption).
var Tasks = []string{"auto", "generate", "embedding", "embed", "classify", "score", "reward", "transcription"}

// poolingTasks are the --task values that select the pooling runner.
var poolingTasks = []string{"embedding", "embed", "classify", "score", "reward"}

// poolingChecks are the rules of the runner flags.
var poolingChecks = []fieldCheck{
	{"runner", func(c Config) error {
		if c.Runner == "" {
			return nil
		}
		return argcheck.Choice(c.Runner, Runners)
	}},
	{"task", func(c Config) error {
		if c.Task == "" {
			return nil
		}
		if err := argcheck.Choice(c.Task, Tasks); err != nil {
			return err
		}
		if c.Runner != "" && c.Runner != "auto" && (c.Runner == "pooling") != slices.Contains(poolingTasks, c.Task) {
			return errors.New("--task " + c.Task + " contradicts --runner " + c.Runner + ": give --runner alone (--task is deprecated)")
		}
		return nil
	}},
}

// An encoder's preset (ModelPreset.Pooling) also turns the prefix cache
// and chunked prefill off, as vLLM does for non-causal attention.

// PoolingModel reports whether the engine runs the pooling runner: asked
// for by --runner pooling or a pooling --task, or picked by auto for a
// pooling model's preset.
func (c Config) PoolingModel() bool {
	switch {
	case c.Runner == "pooling":
		return true
	case c.Runner == "generate":
		return false
	case slices.Contains(poolingTasks, c.Task):
		return true
	case c.Task == "generate":
		return false
	}
	m, ok := presets.LookupModel(c.Model)
	return ok && m.Pooling
}

// pooled ends a pooling request whose prompt is computed at now (under
// mu): no token, "stop".
func (b *base) pooled(s *seq, now time.Time) string {
	s.firstToken, s.lastToken = now, now
	b.m.PromptTokens.Add(float64(s.promptLen))
	b.m.TTFT.Observe(max(0, now.Sub(s.arrival).Seconds())) // its one output, as vLLM records it
	b.m.PromptTokensCached.Add(float64(s.cachedHit))
	b.remove(s)
	b.finish(s, "stop", now, Output{Finished: true, FinishReason: "stop", CachedPromptTokens: s.cachedHit})
	return "stop"
}

// checkPooling applies vLLM's checks to a pooling request: the whole
// context is the prompt's (no output), and its token ids.
func checkPooling(req *Request, maxLen, vocab int) error {
	if n := len(req.PromptTokens); n > maxLen {
		return badRequest("This model's maximum context length is %d tokens. However, you requested %d tokens in the input for embedding generation. Please reduce the length of the input.", maxLen, n)
	}
	req.MaxTokens, req.MinTokens = 1, 0 // never sampled: the request ends with its prompt
	for _, t := range req.PromptTokens {
		if t < 0 || int(t) >= vocab {
			return OutOfVocabulary(int64(t), vocab)
		}
	}
	return nil
}
