package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/request/workload"
	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/run/result"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
)

// loraSim serves adapters sql-lora and chat-lora with exact, short timing.
func loraSim(t *testing.T) (context.Context, scenario.Point, func(...pipeline.Option) (*result.Result, error)) {
	t.Helper()
	srv := startSim(t, "--sim-fixed-ttft", "2ms", "--sim-fixed-itl", "1ms", "--enable-lora", "--lora-modules", "sql-lora=/a/sql", "chat-lora=/a/chat", "--max-loras", "2")
	p := scenario.Point{Key: "run", SamplerInterval: 50 * time.Millisecond,
		Classes: []workload.Class{{Name: "run", Weight: 1, Config: workload.Config{PromptTokens: 16, MaxTokens: 4, IgnoreEOS: true}}},
		Load:    load.Config{Concurrency: 2, Requests: 24}}
	ctx := context.Background()
	return ctx, p, func(opts ...pipeline.Option) (*result.Result, error) { return pipeline.Run(ctx, srv, p, opts...) }
}

// Requests spread over the adapters: each has its own summary, the
// summaries add up to the run's, and the text has a block per adapter.
func TestRunSpreadsOverLoRAAdapters(t *testing.T) {
	t.Parallel()
	_, p, run := loraSim(t)
	res, err := run(pipeline.WithLoRAModules("sql-lora", "chat-lora"), pipeline.WithSeed(7))
	require.NoError(t, err)
	assert.Equal(t, []string{"sql-lora", "chat-lora"}, res.AdapterNames)
	total := 0
	for _, name := range res.AdapterNames {
		s := res.Adapters[name]
		require.NotNil(t, s, name)
		assert.Positive(t, s.Completed, "%s got no request of %d: the draw is not spread", name, p.Load.Requests)
		assert.Zero(t, s.Failed, name)
		total += s.Completed
	}
	assert.Equal(t, res.Summary.Completed, total)
	assert.Equal(t, []string{"chat-lora", "sql-lora"}, res.AdaptersRan, "vllm:lora_requests_info showed both running")
	assert.Empty(t, res.Warnings)
	extras := res.JSONExtras()
	require.Len(t, extras, 2)
	assert.Equal(t, "lora_adapters", extras[0].Key)
	assert.Equal(t, "lora_adapters_ran", extras[1].Key)
	var buf bytes.Buffer
	require.NoError(t, res.WriteText(&buf, 0))
	for _, name := range res.AdapterNames {
		assert.Contains(t, buf.String(), "LoRA adapter "+name+":")
	}
}

// An adapter the server does not list stops the run before any request.
func TestRunRefusesUnservedAdapter(t *testing.T) {
	t.Parallel()
	_, _, run := loraSim(t)
	_, err := run(pipeline.WithLoRAModules("sql-lora", "nope-lora"))
	var ae *pipeline.AdapterError
	require.True(t, errors.As(err, &ae), "err %v", err)
	assert.Equal(t, []string{"nope-lora"}, ae.Missing)
	assert.True(t, strings.Contains(err.Error(), "--lora-modules nope-lora=PATH"), err.Error())
}

// An adapter the requests named but the server never ran as one (a base
// model served under that name) is a warning.
func TestRunWarnsOfAdapterNeverRun(t *testing.T) {
	t.Parallel()
	srv := startSim(t, "--sim-fixed-ttft", "2ms", "--sim-fixed-itl", "1ms", "--served-model-name", "Qwen/Qwen3-0.6B", "fake-lora",
		"--enable-lora", "--lora-modules", "sql-lora=/a/sql")
	p := scenario.Point{Key: "run", SamplerInterval: 50 * time.Millisecond,
		Classes: []workload.Class{{Name: "run", Weight: 1, Config: workload.Config{PromptTokens: 16, MaxTokens: 4, IgnoreEOS: true}}},
		Load:    load.Config{Concurrency: 2, Requests: 16}}
	res, err := pipeline.Run(context.Background(), srv, p, pipeline.WithLoRAModules("sql-lora", "fake-lora"), pipeline.WithSeed(7))
	require.NoError(t, err)
	require.NotEmpty(t, res.Warnings)
	assert.ErrorContains(t, errors.Join(res.Warnings...), "requests named fake-lora and succeeded, but vllm:lora_requests_info never showed it running")
}
