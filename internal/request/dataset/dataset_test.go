package dataset

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/fixtures"
)

// TestOpenFixtures: each committed fixture parses in its format, with the
// counts the generator made (fixtures/datasets/).
func TestOpenFixtures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		format  Format
		entries int
		skipped int
	}{
		{"sharegpt.json", ShareGPT, 12, 1}, // one conversation has a single turn
		{"prompts.jsonl", JSONL, 10, 0},
		{"trace.jsonl", Trace, 12, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Open(fixtures.DatasetFS(), tc.name)
			require.NoError(t, err)
			assert.Equal(t, tc.format, f.Format)
			assert.Len(t, f.Entries, tc.entries)
			assert.Equal(t, tc.skipped, f.Skipped)
		})
	}
}

// TestChatMessages: a JSONL line of messages becomes system, history and
// prompt.
func TestChatMessages(t *testing.T) {
	f, err := Parse("x.jsonl", []byte(`{"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi there"}, `+
		`{"role": "assistant", "content": "hello"}, {"role": "user", "content": "what time is it"}], "output_len": 5}`))
	require.NoError(t, err)
	e := f.Entries[0]
	assert.Equal(t, "be brief", e.System)
	require.Len(t, e.History, 1)
	assert.Equal(t, "hi there", e.History[0].User)
	assert.Equal(t, "hello", e.History[0].Assistant)
	assert.Equal(t, "what time is it", e.Prompt)
	assert.Equal(t, 2+2+1+4, e.PromptWords())
}

// TestParseErrors: bad files are refused with the line and the fix.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"empty", "  \n", "the file is empty"},
		{"not an array", `[{"id": 1}]`, "not a ShareGPT JSON array"},
		{"no output_len", `{"prompt": "a b"}`, `line 1: "output_len" missing`},
		{"both", `{"prompt": "a", "messages": [], "output_len": 2}`, "exclude each other"},
		{"neither", `{"output_len": 2}`, `no "prompt" and no "messages"`},
		{"unknown key", `{"prompt": "a", "output_len": 2, "max": 3}`, `unknown field "max"`},
		{"roles", `{"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}, {"role": "user", "content": "c"}], "output_len": 2}`, `role "user" where "assistant"`},
		{"ends with assistant", `{"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}], "output_len": 2}`, "ending with the user's"},
		{"all skipped", `[{"id": "a", "conversations": [{"from": "human", "value": "x"}]}]`, "no usable entry (1 skipped"},
		{"empty reply skipped", `[{"id": "a", "conversations": [{"from": "human", "value": "x"}, {"from": "gpt", "value": " "}]}]`, "no usable entry (1 skipped"},
		{"garbage line", "{\"prompt\": \"a\", \"output_len\": 2}\nnot json\n", "line 2:"},
		{"trace span overflows", "{\"prompt\": \"a\", \"output_len\": 2, \"timestamp\": 0}\n{\"prompt\": \"b\", \"output_len\": 2, \"timestamp\": 1e12}\n", "line 2: timestamp 1e+12 is 1000000000000 s after the first line's 0; a trace replays in real time, at most 168h0m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.name, []byte(tc.data))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	for file, want := range map[string]string{
		"testdata/unsorted-trace.jsonl": "line 2: timestamp 0.5 is before the previous line's 1",
		"testdata/mixed-trace.jsonl":    "some lines have a \"timestamp\" and others not",
		"testdata/absent.json":          "no such file",
	} {
		_, err := Open(fixtures.DatasetFS(), file)
		require.Error(t, err, file)
		assert.Contains(t, err.Error(), want, file)
	}
}

// TestSelectShareGPT: vLLM's default ShareGPT filters drop the 2-word
// prompt and the 3-word reply; the sample depends on the seed only.
func TestSelectShareGPT(t *testing.T) {
	f, err := Open(fixtures.DatasetFS(), "sharegpt.json")
	require.NoError(t, err)
	all, err := f.Select(Options{Seed: 1})
	require.NoError(t, err)
	assert.Len(t, all.Entries, 10)
	for _, e := range all.Entries {
		assert.GreaterOrEqual(t, e.PromptWords(), 4, e.ID)
		assert.GreaterOrEqual(t, e.OutputLen, 4, e.ID)
	}
	a, err := f.Select(Options{Seed: 7, NumPrompts: 5})
	require.NoError(t, err)
	b, err := f.Select(Options{Seed: 7, NumPrompts: 5})
	require.NoError(t, err)
	c, err := f.Select(Options{Seed: 8, NumPrompts: 5})
	require.NoError(t, err)
	assert.Equal(t, a.Entries, b.Entries, "same seed, same sample")
	assert.Equal(t, a.Hash, b.Hash)
	assert.NotEqual(t, a.Hash, c.Hash, "another seed samples other requests")
	assert.Regexp(t, `^sharegpt.json requests=5 sha256=[0-9a-f]{16}$`, a.Describe())

	_, err = f.Select(Options{NumPrompts: 11})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "11 prompts asked for, but only 10 of its 12 entries pass")
}

// TestSelectFilters: explicit bounds apply to every format.
func TestSelectFilters(t *testing.T) {
	f, err := Open(fixtures.DatasetFS(), "prompts.jsonl")
	require.NoError(t, err)
	for _, tc := range []struct {
		filter Filter
		check  func(Entry) bool
	}{
		{Filter{MaxPrompt: 40}, func(e Entry) bool { return e.PromptWords() <= 40 }},
		{Filter{MinPrompt: 50}, func(e Entry) bool { return e.PromptWords() >= 50 }},
		{Filter{MinOutput: 20, MaxOutput: 30}, func(e Entry) bool { return e.OutputLen >= 20 && e.OutputLen <= 30 }},
		{Filter{MaxTotal: 60}, func(e Entry) bool { return e.PromptWords()+e.OutputLen <= 60 }},
	} {
		s, err := f.Select(Options{Filter: tc.filter})
		require.NoError(t, err, "%+v", tc.filter)
		assert.Less(t, len(s.Entries), len(f.Entries), "%+v keeps every entry: the row tests nothing", tc.filter)
		for _, e := range s.Entries {
			assert.True(t, tc.check(e), "%+v kept %s", tc.filter, e.ID)
		}
	}
	_, err = f.Select(Options{Filter: Filter{MinPrompt: 10, MaxPrompt: 5}})
	assert.ErrorContains(t, err, "min prompt length 10 exceeds max prompt length 5")
	_, err = f.Select(Options{Filter: Filter{MinPrompt: 100000}})
	assert.ErrorContains(t, err, "none of its 10 entries passes")
}

// TestSelectTrace: a trace keeps its order and is replayed from its first
// kept arrival, scaled by Speed.
func TestSelectTrace(t *testing.T) {
	f, err := Open(fixtures.DatasetFS(), "trace.jsonl")
	require.NoError(t, err)
	s, err := f.Select(Options{Seed: 99})
	require.NoError(t, err)
	require.True(t, s.Timed)
	assert.Equal(t, f.Entries, s.Entries, "a trace is not shuffled")
	fast, err := f.Select(Options{Speed: 2, NumPrompts: 4})
	require.NoError(t, err)
	require.Len(t, fast.Entries, 4)
	for i, e := range fast.Entries {
		assert.Equal(t, f.Entries[i].At/2, e.At, "entry %d", i)
	}
	assert.NotEqual(t, s.Hash, fast.Hash)
	assert.Equal(t, time.Duration(0), s.Arrivals()[0])
	assert.Equal(t, 1550*time.Millisecond, s.Arrivals()[len(s.Entries)-1], "fixtures/README.md: 12 requests over 1.55 s")
	_, err = f.Select(Options{Speed: -1})
	assert.ErrorContains(t, err, "speed -1")
}

// TestOpenPath: a file on disk is read by path and named by its base name.
func TestOpenPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mine.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"prompt": "one two three four", "output_len": 9}`+"\n"), 0o644))
	f, err := Open(fixtures.DatasetFS(), path)
	require.NoError(t, err)
	assert.Equal(t, "mine.jsonl", f.Name)
	s, err := f.Select(Options{})
	require.NoError(t, err)
	assert.Equal(t, 4+9, s.Longest().PromptWords()+s.Longest().OutputLen)
}
