package pipeline_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// TestLiveChatCarriesReplies: in a live chat every turn's history holds
// the server's own replies to the earlier turns (the fake numbers its
// replies, so each is told apart), and the results come per turn.
func TestLiveChatCarriesReplies(t *testing.T) {
	t.Parallel()
	sc, err := scenario.Builtin("chat-live")
	require.NoError(t, err)
	p := sc.Points(scenario.Quick)[0]
	p.Load.Warmup = 1 // a warm-up conversation carries replies too (the quick size sends none)
	fake := &fakeServer{tokensPerWord: 1}
	res, err := pipeline.Run(context.Background(), fake.start(t), p, pipeline.WithoutMetrics())
	require.NoError(t, err)
	samples := res.Samples()
	require.Len(t, samples, 5*4, "one warm-up and 4 measured conversations of 4 turns")
	replies := map[string]bool{}
	for _, s := range samples {
		require.True(t, s.OK(), "%d: %v", s.Index, s.Err)
		require.True(t, strings.HasPrefix(strings.TrimSpace(s.Text), "reply "), "the reply text is kept: %q", s.Text)
		replies[strings.TrimSpace(s.Text)] = true
	}
	seconds := 0
	for _, msgs := range fake.requests {
		// system, then user/assistant pairs, then the user's turn
		for k := 2; k < len(msgs)-1; k += 2 {
			require.Equal(t, "assistant", msgs[k].Role)
			assert.True(t, replies[strings.TrimSpace(msgs[k].Content)], "history carries %q, not a reply the server sent", msgs[k].Content)
		}
		if len(msgs) == 4 {
			seconds++
		}
	}
	assert.Equal(t, 5, seconds, "every conversation's second turn")
	m := res.Metrics()
	for _, turn := range []string{"turn1-", "turn2-", "turn3-", "turn4-"} {
		_, ok := m[turn+units.TTFTP99]
		assert.True(t, ok, "%s%s", turn, units.TTFTP99)
	}
	assert.Equal(t, []string{"turn1", "turn2", "turn3", "turn4"}, res.ClassNames)
}

// TestLiveChatOnSimulator: on the simulator (prefix caching on), the live
// scenario runs clean and its later turns reuse the cached prefix.
func TestLiveChatOnSimulator(t *testing.T) {
	t.Parallel()
	srv := startSim(t, "--enable-prefix-caching")
	sc, err := scenario.Builtin("chat-live")
	require.NoError(t, err)
	res, err := pipeline.Run(context.Background(), srv, sc.Points(scenario.Quick)[0])
	require.NoError(t, err)
	assert.Zero(t, res.Summary.Failed)
	for _, s := range res.Samples() {
		if s.Index%4 > 0 {
			assert.Positive(t, s.CachedTokens, "request %d (turn %d) hit the prefix cache", s.Index, s.Index%4+1)
		}
	}
	assert.Empty(t, res.Warnings)
}
