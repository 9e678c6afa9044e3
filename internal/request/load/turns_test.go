package load

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/run/sample"
)

// chatSender replies "reply to <prompt>", fails the prompts in fail, and
// keeps every request it got.
type chatSender struct {
	fail map[string]bool
	mu   sync.Mutex
	got  map[int]openai.Request
}

func (c *chatSender) Send(ctx context.Context, req openai.Request, s *sample.Sample) {
	c.mu.Lock()
	c.got[s.Index] = req
	c.mu.Unlock()
	s.Sent = time.Now()
	if c.fail[req.Prompt] {
		s.Fail(sample.ErrHTTPStatus, 500, "boom")
		return
	}
	s.Chunks = []sample.Chunk{{At: time.Millisecond}}
	s.CompletionTokens = 1
	s.Text = "reply to " + req.Prompt
	s.Done = time.Now()
}

// turnRequest is turn i%3 of conversation i/3, with placeholder replies.
func turnRequest(i int) openai.Request {
	conv, turn := i/3, i%3
	req := openai.Request{Model: "m", Prompt: fmt.Sprintf("c%d t%d", conv, turn), KeepText: true}
	for t := range turn {
		req.History = append(req.History, openai.Turn{User: fmt.Sprintf("c%d t%d", conv, t), Assistant: "placeholder"})
	}
	return req
}

// TestConversations: each turn carries the server's replies to the earlier
// ones, goes a think time after the previous reply, and a failed turn ends
// its conversation.
func TestConversations(t *testing.T) {
	sender := &chatSender{fail: map[string]bool{"c2 t1": true}, got: map[int]openai.Request{}}
	think := 20 * time.Millisecond
	res, err := Run(context.Background(), Config{Rate: 100, Requests: 3, Warmup: 1, Turns: 3, ThinkTime: think, Seed: 1}, sender, turnRequest)
	require.NoError(t, err)
	require.Len(t, res.Samples, 12, "4 conversations of 3 turns")
	checkDense(t, res, 3)
	second := sender.got[4] // conversation 1, turn 1
	require.Len(t, second.History, 1)
	assert.Equal(t, "reply to c1 t0", second.History[0].Assistant, "the second turn carries the first reply")
	third := sender.got[5]
	assert.Equal(t, []openai.Turn{{User: "c1 t0", Assistant: "reply to c1 t0"}, {User: "c1 t1", Assistant: "reply to c1 t1"}}, third.History)
	for i := 1; i < 3; i++ {
		gap := res.Samples[3+i].Scheduled.Sub(res.Samples[3+i-1].Done)
		assert.GreaterOrEqual(t, gap, think, "turn %d waits the think time", i)
	}
	failed := res.Samples[8] // conversation 2, turn 2
	require.NotNil(t, failed.Err)
	assert.Equal(t, sample.ErrPriorTurn, failed.Err.Kind)
	assert.Contains(t, failed.Err.Message, "turn of request 7 failed (http_status)")
	_, sent := sender.got[8]
	assert.False(t, sent, "a turn after a failed one is not sent")
	assert.ErrorContains(t, Config{Concurrency: 1, Requests: 1, ThinkTime: time.Second}.Validate(), "without conversations")
}
