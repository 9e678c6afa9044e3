package pipeline_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/target/server"
)

// An unstreamed run (embeddings, rerank): every answer measured whole
// (E2EL, no TTFT or TPOT), its prompt tokens reconciled with the server's
// counter.
func TestRunEmbeddings(t *testing.T) {
	t.Parallel()
	prof, err := profile.Builtin("embedding") // opt-in
	require.NoError(t, err)
	for _, e := range []openai.Endpoint{openai.Embeddings, openai.Rerank} {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			srv, err := server.Run(context.Background(), prof.WithSimArgs("--sim-fixed-ttft", "2ms", "--sim-fixed-itl", "1ms"), server.WithBackend(server.KindSim))
			require.NoError(t, err)
			t.Cleanup(func() { _ = srv.Close(context.Background()) })
			p := thinkPoint()
			res, err := pipeline.Run(context.Background(), srv, p, pipeline.WithEndpoint(e), pipeline.WithModel("BAAI/bge-small-en-v1.5"))
			require.NoError(t, err)
			s := res.Summary
			assert.Equal(t, p.Load.Requests, s.Completed)
			assert.Equal(t, 16*p.Load.Requests, s.TotalInputTokens)
			assert.Zero(t, s.TTFT.N, "no stream, no TTFT")
			assert.Zero(t, s.TPOT.N)
			assert.Equal(t, p.Load.Requests, s.E2EL.N)
			assert.Positive(t, s.RequestThroughput)
			assert.Empty(t, res.Warnings, "the prompt tokens reconcile")
			d, err := res.Delta.Counter(scrape.PromptTokensTotal)
			require.NoError(t, err)
			assert.GreaterOrEqual(t, d, float64(s.TotalInputTokens), "the measured requests' tokens, and the warm-up's")
		})
	}
}

// A generative model refuses embeddings and rerank with vLLM's message,
// and the samples carry it with the client's fix.
func TestRunEmbeddingsOnGenerativeModel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		endpoint openai.Endpoint
		want     string
	}{
		{openai.Embeddings, "The model does not support Embeddings API"},
		{openai.Rerank, "The model does not support Score API"},
	} {
		t.Run(string(tc.endpoint), func(t *testing.T) {
			t.Parallel()
			srv := startSim(t, "--sim-fixed-ttft", "2ms", "--sim-fixed-itl", "1ms")
			p := thinkPoint()
			p.Load.Requests = 4
			res, err := pipeline.Run(context.Background(), srv, p, pipeline.WithEndpoint(tc.endpoint))
			require.NoError(t, err)
			assert.Equal(t, 4, res.Summary.Failed)
			ex, ok := res.Summary.ErrorExamples[sample.ErrHTTPStatus]
			require.True(t, ok, "%v", res.Summary.FailedByKind)
			assert.Contains(t, ex.Detail(), tc.want)
			assert.Contains(t, ex.Detail(), "serve a pooling model")
		})
	}
}
