package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/fixtures"
	"github.com/vllmperf/vllmperf/internal/request/dataset"
	"github.com/vllmperf/vllmperf/internal/request/workload"
)

// TestRunDatasets: each data set format runs through `vllmperf run` on
// the simulator, which counts a token a word: every entry is sent once,
// with its own words (plus the unique ones) and its own output length.
func TestRunDatasets(t *testing.T) {
	for _, tc := range []struct {
		file string
		args []string
		opts dataset.Options
	}{
		{"sharegpt.json", []string{"--concurrency", "4"}, dataset.Options{}},
		{"prompts.jsonl", []string{"--rate", "50", "--num-prompts", "6", "--seed", "3"}, dataset.Options{NumPrompts: 6, Seed: 3}},
		{"trace.jsonl", []string{"--trace-speed", "4"}, dataset.Options{Speed: 4}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			set, err := dataset.Load(fixtures.DatasetFS(), tc.file, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			got, samples := runJSON(t, append([]string{"--dataset", tc.file}, tc.args...)...)
			in, out := 0, 0
			for _, e := range set.Entries {
				in += e.PromptWords() + workload.UniqueWords
				out += e.OutputLen
			}
			if got["completed"].(float64) != float64(len(set.Entries)) || got["failed"].(float64) != 0 {
				t.Fatalf("completed %v failed %v, want %d and 0", got["completed"], got["failed"], len(set.Entries))
			}
			if got["total_input_tokens"].(float64) != float64(in) || got["total_output_tokens"].(float64) != float64(out) {
				t.Errorf("tokens in %v out %v, want %d and %d", got["total_input_tokens"], got["total_output_tokens"], in, out)
			}
			if !set.Timed {
				return
			}
			measured := samples[1:]
			start := measured[0].Scheduled
			for k, s := range measured {
				if at := s.Scheduled.Sub(start); at != set.Entries[k].At {
					t.Errorf("request %d due at %v, want the trace's %v (×4)", k, at, set.Entries[k].At)
				}
				if s.CompletionTokens != set.Entries[k].OutputLen {
					t.Errorf("request %d: %d tokens, want entry %d's %d", k, s.CompletionTokens, k, set.Entries[k].OutputLen)
				}
			}
		})
	}
}

// TestRunDatasetBadInput: data set mistakes are usage errors that say what
// to do.
func TestRunDatasetBadInput(t *testing.T) {
	long := filepath.Join(t.TempDir(), "long.jsonl") // beyond memory-saving's 2048-token context
	if err := os.WriteFile(long, []byte(`{"prompt": "four words of prompt", "output_len": 3000}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--concurrency", "1", "--requests", "1", "--num-prompts", "3"}, "--num-prompts is vLLM's name for --requests without a data set: give one of them"},
		{[]string{"--dataset", "sharegpt.json"}, "--dataset sharegpt.json: it has no timestamps to replay: say how to load the server"},
		{[]string{"--dataset", "sharegpt.json", "--concurrency", "1", "--prompt-tokens", "64"}, "--prompt-tokens makes synthetic prompts"},
		{[]string{"--dataset", "sharegpt.json", "--concurrency", "1", "--num-prompts", "50"}, "50 prompts asked for, but only 10"},
		{[]string{"--dataset", "nowhere.json", "--concurrency", "1"}, "built-in data sets: prompts.jsonl, sharegpt.json, trace.jsonl"},
		{[]string{"--dataset", "trace.jsonl", "--trace-speed", "0"}, "--trace-speed 0: want a positive factor"},
		{[]string{"--dataset", "trace.jsonl", "--trace-speed", "2", "--rate", "4"}, "--trace-speed replays a trace's timestamps, which --concurrency or --rate replace"},
		{[]string{"--dataset", "prompts.jsonl", "--trace-speed", "2", "--concurrency", "4"}, "(or the file has none)"},
		{[]string{"--dataset", long, "--concurrency", "1", "--profile", "memory-saving"}, "needs 10 prompt words + 3000 output tokens, more than the 2048"},
	} {
		var out, errOut limitedBuffer
		err := run(context.Background(), &out, &errOut, append([]string{"run", "--quiet"}, tc.args...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error = %v, want it to contain %q", tc.args, err, tc.want)
			continue
		}
		if code := exitCode(err, &errOut); code != 2 {
			t.Errorf("%v: exit %d, want 2", tc.args, code)
		}
	}
}
