package pipeline_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/request/workload"
	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
)

// thinkPoint is 16 requests of 8 output tokens at concurrency 2.
func thinkPoint() scenario.Point {
	return scenario.Point{Key: "run", SamplerInterval: 50 * time.Millisecond,
		Classes: []workload.Class{{Name: "run", Weight: 1, Config: workload.Config{PromptTokens: 16, MaxTokens: 8, IgnoreEOS: true}}},
		Load:    load.Config{Concurrency: 2, Requests: 16}}
}

// A reasoning model's answers: the thinking comes first, its tokens and
// the answer's add up to the completion, and the text says so.
func TestRunSplitsReasoning(t *testing.T) {
	t.Parallel()
	srv := startSim(t, "--sim-fixed-ttft", "2ms", "--sim-fixed-itl", "2ms", "--reasoning-parser", "qwen3")
	res, err := pipeline.Run(context.Background(), srv, thinkPoint())
	require.NoError(t, err)
	re := res.Reasoning
	require.NotNil(t, re, "the stream carried reasoning_content")
	assert.Equal(t, res.Summary.Completed, re.Requests)
	assert.Zero(t, re.Unanswered)
	assert.True(t, re.Counted, "the simulator reports continuous usage")
	assert.InDelta(t, 8, re.ReasoningTokens.Mean+re.AnswerTokens.Mean, 1e-9, "the parts add up to max_tokens")
	assert.Positive(t, re.ReasoningTokens.Mean)
	assert.Greater(t, re.FirstAnswer.Median, re.FirstReasoning.Median, "the answer follows the thinking")
	var buf bytes.Buffer
	require.NoError(t, res.WriteText(&buf, 0))
	assert.Contains(t, buf.String(), "Median TTFT answer (ms):")
}

// Without a reasoning parser there is no reasoning block.
func TestRunWithoutReasoning(t *testing.T) {
	t.Parallel()
	srv := startSim(t, "--sim-fixed-ttft", "2ms", "--sim-fixed-itl", "2ms")
	res, err := pipeline.Run(context.Background(), srv, thinkPoint())
	require.NoError(t, err)
	assert.Nil(t, res.Reasoning)
}

// Thinking that fills the whole output budget: every request is
// unanswered, and the answer's times say so instead of a 0.
func TestRunReasoningWithoutAnswer(t *testing.T) {
	t.Parallel()
	srv := startSim(t, "--sim-fixed-ttft", "2ms", "--sim-fixed-itl", "2ms", "--reasoning-parser", "qwen3", "--sim-reasoning-share", "1")
	res, err := pipeline.Run(context.Background(), srv, thinkPoint())
	require.NoError(t, err)
	require.NotNil(t, res.Reasoning)
	assert.Equal(t, res.Reasoning.Requests, res.Reasoning.Unanswered)
	assert.Zero(t, res.Reasoning.FirstAnswer.N)
	var buf bytes.Buffer
	require.NoError(t, res.WriteText(&buf, 0))
	assert.Contains(t, buf.String(), "n/a (no answer)")
}
