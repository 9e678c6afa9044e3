package vllmfmt

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/run/stats"
)

// Extra keys come after vllmperf's own, and Figures is the figure keys
// alone, nested.
func TestWriteJSONWith(t *testing.T) {
	s := &stats.Summary{Completed: 3, Duration: time.Second, RequestThroughput: 3, TTFT: stats.NewDist([]float64{1, 2, 3}, 3)}
	var b bytes.Buffer
	require.NoError(t, WriteJSONWith(&b, s, Meta{}, Extra{Key: "part", Value: Figures(s)}, Extra{Key: "order", Value: Ordered([]string{"b", "a"}, []any{1, 2})}))
	var got map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b.Bytes(), &got))
	var part map[string]any
	require.NoError(t, json.Unmarshal(got["part"], &part))
	assert.Equal(t, 3.0, part["completed"])
	assert.Equal(t, 2.0, part["median_ttft_ms"])
	assert.NotContains(t, part, "date", "a part has the figures only")
	assert.Equal(t, `{"b":1,"a":2}`, string(bytes.Join(bytes.Fields(got["order"]), nil)))
	text := b.String()
	assert.Less(t, bytes.Index([]byte(text), []byte(`"warnings"`)), bytes.Index([]byte(text), []byte(`"part"`)), "after vllmperf's own keys")
}
