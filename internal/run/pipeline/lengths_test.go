package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/request/workload"
	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// randomPoint is one class of random-word prompts of declared tokens.
func randomPoint(tokens int) scenario.Point {
	return scenario.Point{Key: "conc=2", SamplerInterval: scenario.DefaultQuickSamplerInterval,
		Classes: []workload.Class{{Name: "rand", Weight: 1, Config: workload.Config{PromptTokens: tokens, MaxTokens: 4, IgnoreEOS: true}}},
		Load:    load.Config{Concurrency: 2, Requests: 6, Warmup: 1}}
}

// TestLengthsAdjusted: on a server that counts two tokens a word, the
// synthetic prompts are rebuilt to hold their declared 64 tokens (32
// words), and the run reports 64 by /tokenize and by usage.
func TestLengthsAdjusted(t *testing.T) {
	t.Parallel()
	fake := &fakeServer{tokensPerWord: 2}
	res, err := pipeline.Run(context.Background(), fake.start(t), randomPoint(64), pipeline.WithoutMetrics())
	require.NoError(t, err)
	require.Empty(t, res.Warnings)
	l := res.Lengths
	require.True(t, l.Tokenize)
	assert.True(t, l.Adjusted)
	require.Len(t, l.Classes, 1)
	c := l.Classes[0]
	assert.Equal(t, 64, c.Declared)
	assert.Equal(t, 64.0, c.Text)
	assert.Equal(t, 64.0, c.Tokenized)
	assert.Equal(t, 6, c.Requests, "every measured request")
	assert.Equal(t, 64.0, c.Served)
	assert.Equal(t, 64.0, res.Metrics()[units.PromptTok])
	assert.Zero(t, l.Mismatched)
	for _, msgs := range fake.requests {
		assert.Len(t, strings.Fields(msgs[len(msgs)-1].Content), 32, "half as many words as tokens")
	}
	var text strings.Builder
	require.NoError(t, res.WriteText(&text, 0))
	assert.Contains(t, text.String(), "Prompt tokens: /tokenize, prompts adjusted to the model's tokens per word")
	assert.Contains(t, text.String(), "rand         declared 64, text 64.0, /tokenize 64.0 (6 requests), served 64.0")
}

// TestLengthsWithoutTokenize: without /tokenize the prompts stay one word
// a token; the usage counts decide, and the difference from the declared
// length is a warning with the numbers.
func TestLengthsWithoutTokenize(t *testing.T) {
	t.Parallel()
	fake := &fakeServer{tokensPerWord: 2, noTokenize: true}
	res, err := pipeline.Run(context.Background(), fake.start(t), randomPoint(64), pipeline.WithoutMetrics())
	require.NoError(t, err)
	l := res.Lengths
	assert.False(t, l.Tokenize)
	assert.False(t, l.Adjusted)
	assert.Equal(t, 128.0, l.Classes[0].Served)
	assert.Equal(t, 128.0, res.Metrics()[units.PromptTok])
	require.Len(t, res.Warnings, 1)
	assert.Contains(t, res.Warnings[0].Error(), "class rand: prompts declared 64 tokens were counted 128.0 on average by the server (usage; it has no /tokenize")
}

// TestLengthsOnSimulator: for each data set point and a synthetic one, the
// prompt tokens the run reports are the simulator's /tokenize counts, which
// its usage confirms request by request.
func TestLengthsOnSimulator(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	ds, err := scenario.Builtin("datasets")
	require.NoError(t, err)
	tr, err := scenario.Builtin("trace-replay")
	require.NoError(t, err)
	points := append(ds.Points(scenario.Quick), tr.Points(scenario.Quick)[1], randomPoint(100))
	for _, p := range points {
		res, err := pipeline.Run(context.Background(), srv, p)
		require.NoError(t, err, p.Key)
		l := res.Lengths
		require.True(t, l.Tokenize, p.Key)
		assert.False(t, l.Adjusted, "%s: the simulator counts a token a word", p.Key)
		assert.Zero(t, l.Mismatched, p.Key)
		sum, n := 0, 0
		for _, s := range res.Load.Measured() {
			require.True(t, s.OK(), "%s: %v", p.Key, s.Err)
			sum += s.PromptTokens
			n++
		}
		c := l.Classes[0]
		assert.Equal(t, float64(sum)/float64(n), res.Metrics()[units.PromptTok], "%s: the usage total over the measured requests", p.Key)
		assert.Equal(t, c.Tokenized, c.Served, "%s: the same requests", p.Key)
		assert.Equal(t, n, c.Requests, p.Key)
		assert.Empty(t, res.Warnings, p.Key)
		var text strings.Builder
		require.NoError(t, res.WriteText(&text, 0))
		if d := p.Classes[0].Dataset; d != nil {
			assert.Contains(t, text.String(), "Data set:                                "+d.Describe(), p.Key)
		}
	}
}

// TestWorkloadsDocLengthsLine: docs/workloads.md shows the lengths line of
// `vllmperf run --concurrency 4 --requests 8 --prompt-tokens 256` on the
// simulator as the run prints it.
func TestWorkloadsDocLengthsLine(t *testing.T) {
	t.Parallel()
	p := randomPoint(256)
	p.Classes[0].Name = "run"
	p.Load = load.Config{Concurrency: 4, Requests: 8, Warmup: 1}
	res, err := pipeline.Run(context.Background(), startSim(t), p)
	require.NoError(t, err)
	var text strings.Builder
	require.NoError(t, res.WriteText(&text, 0))
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "workloads.md"))
	require.NoError(t, err)
	for _, line := range strings.Split(text.String(), "\n") {
		if strings.HasPrefix(line, "run ") || strings.Contains(line, "Prompt tokens:") {
			assert.Contains(t, string(doc), line+"\n", "docs/workloads.md lacks the line the run prints")
		}
	}
}

// TestLengthsContextByTokens: a data set whose words fit the context but
// whose tokens, as the server's /tokenize counts them, do not is refused
// before any request, with the tokens.
func TestLengthsContextByTokens(t *testing.T) {
	t.Parallel()
	fake := &fakeServer{tokensPerWord: 2, maxModelLen: 150}
	sc, err := scenario.Builtin("datasets")
	require.NoError(t, err)
	p := sc.Points(scenario.Quick)[0] // ShareGPT: its longest entry is 128+6 words and 8 tokens out, 142 ≤ 150
	_, err = pipeline.Run(context.Background(), fake.start(t), p, pipeline.WithoutMetrics())
	var ce *pipeline.ContextError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 2*(128+6), ce.Longest.PromptWords, "counted in the server's tokens")
	assert.Equal(t, 8, ce.Longest.MaxTokens)
	assert.Empty(t, fake.requests, "no request was sent")
}
