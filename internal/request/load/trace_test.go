package load

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTraceReplay: a trace's requests are scheduled at its offsets from
// the measured phase's start, and the run ends after its last request.
func TestTraceReplay(t *testing.T) {
	arrivals := []time.Duration{0, 30 * time.Millisecond, 30 * time.Millisecond, 120 * time.Millisecond}
	var calls []int
	res, err := Run(context.Background(), Config{Arrivals: arrivals, Warmup: 1}, &fakeSender{latency: fixed(5 * time.Millisecond)}, nextFunc(&calls))
	require.NoError(t, err)
	checkDense(t, res, 1)
	m := res.Measured()
	require.Len(t, m, len(arrivals), "Requests defaults to the trace's length")
	for k, s := range m {
		assert.Equal(t, arrivals[k], s.Scheduled.Sub(res.Start), "request %d is due at its offset", k)
		assert.False(t, s.Sent.Before(s.Scheduled), "request %d sent before it was due", k)
	}
	assert.GreaterOrEqual(t, res.End.Sub(res.Start), 120*time.Millisecond)
}

// TestTraceValidate: a trace excludes the other load shapes and bounds
// Requests.
func TestTraceValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Arrivals: []time.Duration{0}, Rate: 2}, "a trace sets its own pace"},
		{Config{Arrivals: []time.Duration{0}, Concurrency: 2}, "a trace sets its own pace"},
		{Config{Arrivals: []time.Duration{}}, "Arrivals is empty"},
		{Config{Arrivals: []time.Duration{0, 1}, Requests: 3}, "the trace has 2 arrivals"},
		{Config{Arrivals: []time.Duration{5, 1}}, "Arrivals[1] = 1ns: arrivals must be ≥ 0 and in order"},
		{Config{Arrivals: []time.Duration{0}, Burstiness: 2}, "a trace's gaps are its own"},
	} {
		err := tc.cfg.Validate()
		require.Error(t, err, "%+v", tc.cfg)
		assert.Contains(t, err.Error(), tc.want)
	}
	assert.NoError(t, Config{Arrivals: []time.Duration{0, 1}, Requests: 1, MaxConcurrency: 4}.Validate())
}
