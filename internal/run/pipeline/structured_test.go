package pipeline_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
)

// TestStructuredOutput: on the simulator, the JSON-schema and tool-call
// points complete with outputs that parse against their schemas; a
// max_tokens too short for the document cuts it, and each such response
// is a failed request of kind schema.
func TestStructuredOutput(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	sc, err := scenario.Builtin("structured-output")
	require.NoError(t, err)
	for _, p := range sc.Points(scenario.Quick) {
		res, err := pipeline.Run(context.Background(), srv, p)
		require.NoError(t, err, p.Key)
		assert.Zero(t, res.Summary.Failed, "%s: %v", p.Key, res.Summary.FailedByKind)
		assert.Equal(t, p.Load.Requests, res.Summary.Completed, p.Key)
		for _, s := range res.Samples() {
			assert.NotEmpty(t, s.Text, "%s: request %d kept its output", p.Key, s.Index)
			assert.Equal(t, "stop", s.FinishReason, "%s: the document is complete", p.Key)
		}
		assert.Empty(t, res.Warnings, p.Key)

		cut := p
		cut.Classes = append(cut.Classes[:0:0], p.Classes...)
		cut.Classes[0].Config.MaxTokens = 5
		res, err = pipeline.Run(context.Background(), srv, cut)
		require.NoError(t, err, p.Key)
		assert.Equal(t, p.Load.Requests, res.Summary.FailedByKind[sample.ErrSchema], "%s: every cut document fails", p.Key)
		assert.Contains(t, res.Samples()[1].Err.Message, "the output is not JSON")
	}
}
