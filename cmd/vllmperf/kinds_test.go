package main

import (
	"context"
	"strings"
	"testing"
)

// TestRunTrafficKinds: each opt-in profile, started on the simulator by
// vllmperf run --profile, with the flags that send its traffic, exits 0
// and prints its own figures; each kind's bad input exits 2 with the fix.
func TestRunTrafficKinds(t *testing.T) {
	t.Parallel()
	load := []string{"--concurrency", "2", "--requests", "8", "--prompt-tokens", "32", "--max-tokens", "8", "--quiet"}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in stdout (exit 0) or stderr
	}{
		{"LoRA adapters, a block each", []string{"--profile", "lora", "--lora-modules", "sql-lora", "chat-lora"}, 0, "LoRA adapter chat-lora:"},
		{"an adapter the server lacks", []string{"--profile", "lora", "--lora-modules", "sql-lora", "nope-lora"}, 2, "--lora-modules nope-lora=PATH"},
		{"embeddings: E2EL only", []string{"--profile", "embedding", "--endpoint", "embeddings"}, 0, "TTFT (ms):                               n/a (no samples)"},
		{"rerank: E2EL only", []string{"--profile", "embedding", "--endpoint", "rerank"}, 0, "TTFT (ms):                               n/a (no samples)"},
		{"rerank on a generative model", []string{"--profile", "reasoning", "--endpoint", "rerank"}, 1, "The model does not support Score API"},
		{"images", []string{"--profile", "vision", "--dataset-name", "random-mm", "--random-mm-bucket-config", "{(64, 64, 1): 1.0}"}, 0, "Median TTFT (ms):"},
		{"a video bucket", []string{"--profile", "vision", "--dataset-name", "random-mm", "--random-mm-bucket-config", "{(64, 64, 4): 1.0}"}, 2, "4 frames is a video"},
		{"images and a data set file", []string{"--profile", "vision", "--dataset-name", "random-mm", "--dataset", "prompts.jsonl"}, 2, "drop one of them"},
		{"images on completions", []string{"--profile", "vision", "--dataset-name", "random-mm", "--endpoint", "completions"}, 2, "go to --endpoint chat"},
		{"reasoning", []string{"--profile", "reasoning"}, 0, "Median TTFT answer (ms):"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, context.Background(), append(append([]string{"run"}, tc.args...), load...)...)
			if tc.code != 0 {
				r.wantCode(t, tc.code, tc.want)
				return
			}
			r.wantCode(t, 0)
			if !strings.Contains(r.stdout, tc.want) {
				t.Errorf("stdout lacks %q:\n%s", tc.want, r.stdout)
			}
		})
	}
}
