package workload

import (
	"encoding/base64"
	"image/jpeg"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/request/openai"
)

func TestParseBucketConfig(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Bucket
		err  string
	}{
		{"{(896, 896, 1): 1.0}", []Bucket{{896, 896, 1}}, ""},
		{"{(256, 256, 1): 0.5, (720, 1280, 1): 0.5}", []Bucket{{256, 256, 0.5}, {720, 1280, 0.5}}, ""},
		{"{(224,224,1): 3, (448,448,1): 1}", []Bucket{{224, 224, 0.75}, {448, 448, 0.25}}, ""},
		{"(896, 896, 1): 1.0", nil, "want {(HEIGHT, WIDTH, 1)"},
		{"{(896, 896, 8): 1.0}", nil, "8 frames is a video"},
		{"{(896, 896): 1.0}", nil, "want (HEIGHT, WIDTH, FRAMES): PROBABILITY"},
		{"{(896, 896, 1): 0}", nil, "sum to 0"},
		{"{(0, 896, 1): 1}", nil, "sides go from 1 to 8192"},
	} {
		got, err := ParseBucketConfig(tc.in)
		if tc.err != "" {
			require.Error(t, err, tc.in)
			assert.True(t, strings.Contains(err.Error(), tc.err), "%s: %v", tc.in, err)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

// Requests carry Items JPEG images of their bucket's size, the same for
// the same seed and index.
func TestGeneratorImages(t *testing.T) {
	mm := &MM{Items: 2, Buckets: []Bucket{{Height: 32, Width: 48, P: 1}}}
	g, err := New(Config{Model: "m", PromptTokens: 16, MM: mm, Seed: 3, Nonce: 1})
	require.NoError(t, err)
	r := g.Next(5)
	require.Len(t, r.Images, 2)
	for _, u := range r.Images {
		data, ok := strings.CutPrefix(u, "data:image/jpeg;base64,")
		require.True(t, ok, "a base64 JPEG data: URL")
		raw, err := base64.StdEncoding.DecodeString(data)
		require.NoError(t, err)
		cfg, err := jpeg.DecodeConfig(strings.NewReader(string(raw)))
		require.NoError(t, err)
		assert.Equal(t, 48, cfg.Width)
		assert.Equal(t, 32, cfg.Height)
	}
	assert.NotEqual(t, r.Images[0], r.Images[1], "two images of one request differ")
	assert.Equal(t, r.Images, g.Next(5).Images, "a pure function of the index")
	_, err = New(Config{Model: "m", Endpoint: openai.Completions, MM: mm})
	assert.ErrorContains(t, err, "images go to the chat endpoint")
	_, err = New(Config{Model: "m", MM: &MM{Items: 0, Buckets: mm.Buckets}})
	assert.ErrorContains(t, err, "at least 1 image")
}
