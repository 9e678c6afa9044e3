package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/thirdparty/llmd"
)

// TestContainerImageEntrypoint runs llm-d-inference-sim, a vLLM-compatible
// server that is not vLLM, from its image through the container backend
// as its server family says (llmd.Family: the image's own ENTRYPOINT, then
// --model MODEL --port 8000 and the profile's flags, its own), and streams
// one chat completion through it. A vLLM flag the server does not know
// fails the start at once with the server's complaint, although it exits 0.
func TestContainerImageEntrypoint(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), llmd.BuildTimeout)
	defer cancel()
	if err := server.DockerAvailable(ctx); err != nil {
		skipOrFail(t, "a Docker engine", err)
	}
	if _, err := llmd.Binary(ctx); err != nil {
		skipOrFail(t, "llm-d-inference-sim", err)
	}
	ref, err := llmd.Image(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// No GPUs, a throw-away cache, the simulator's short start-up.
	t.Setenv("VLLMPERF_GPUS", "none")
	t.Setenv("VLLMPERF_HF_CACHE", t.TempDir())
	t.Setenv("VLLMPERF_STARTUP_TIMEOUT", "1m")
	env, err := server.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, p profile.Profile) (server.Server, *bytes.Buffer, error) {
		var log bytes.Buffer
		opts := append(slices.Clone(env), server.WithBackend(server.KindContainer), server.WithImage(ref), server.WithFamily(llmd.Family), server.WithLog(&log))
		srv, err := server.Run(ctx, p, opts...)
		if err == nil {
			t.Cleanup(func() {
				if err := srv.Close(context.Background()); err != nil {
					t.Error(err)
				}
			})
		}
		return srv, &log, err
	}

	t.Run("serves a stream", func(t *testing.T) {
		p, err := profile.ParseFor(llmd.Family, "llmd.yaml", []byte("name: llmd\nflags:\n  max-num-seqs: 4\n  max-model-len: 512\n  time-to-first-token: 5ms\n  inter-token-latency: 1ms\n"))
		if err != nil {
			t.Fatal(err)
		}
		srv, log, err := run(t, p)
		if err != nil {
			t.Fatalf("%v\nlog:\n%s", err, log)
		}
		if d := srv.Describe(); d.Image != ref || d.Simulator || srv.Model() != profile.DefaultModel {
			t.Errorf("Describe %+v, Model %q", d, srv.Model())
		}
		if got := maxModelLen(t, srv.BaseURL()); got != 512 {
			t.Errorf("/v1/models max_model_len = %d, want the profile's 512", got)
		}
		const maxTokens = 5
		usage := streamUsage(t, srv.BaseURL(), srv.Model(), maxTokens)
		if usage.CompletionTokens != maxTokens || usage.PromptTokens <= 0 {
			t.Errorf("usage %+v, want %d completion tokens", usage, maxTokens)
		}
	})

	t.Run("vLLM-only flag", func(t *testing.T) {
		p, err := profile.Builtin("basic") // --dtype float16: vLLM's, not llm-d's
		if err != nil {
			t.Fatal(err)
		}
		begin := time.Now()
		_, _, err = run(t, p)
		if err == nil {
			t.Fatal("Run succeeded with --dtype")
		}
		if !strings.Contains(err.Error(), "the server rejected its command line") || !strings.Contains(err.Error(), "unknown flag: --dtype") {
			t.Errorf("error does not name the rejected flag:\n%v", err)
		}
		if took := time.Since(begin); took > 30*time.Second {
			t.Errorf("failing took %s: want at once, not the start-up timeout", took)
		}
	})
}

// skipOrFail skips t because what it needs is missing, or fails it under
// CI=true.
func skipOrFail(t *testing.T, what string, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is required under CI=true: %v", what, err)
	}
	t.Skipf("%s is not available, test skipped (with CI=true it fails): %v", what, err)
}

// maxModelLen reads the first model's max_model_len from /v1/models.
func maxModelLen(t *testing.T, base string) int {
	t.Helper()
	resp, err := http.Get(base + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var models struct {
		Data []struct {
			MaxModelLen int `json:"max_model_len"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&models); err != nil || len(models.Data) == 0 {
		t.Fatalf("/v1/models: %v, %+v", err, models)
	}
	return models.Data[0].MaxModelLen
}

// usage is an OpenAI usage object.
type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// streamUsage streams one chat completion of maxTokens tokens (ignore_eos)
// with include_usage and returns the usage chunk's figures; it fails t
// unless the stream ends with [DONE] after a usage chunk.
func streamUsage(t *testing.T, base, model string, maxTokens int) usage {
	t.Helper()
	body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"Hello"}],"max_tokens":%d,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`, model, maxTokens)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Post(base+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %s: %s", resp.Status, b)
	}
	var got *usage
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		switch {
		case !ok:
			continue
		case data == "[DONE]":
			if got == nil {
				t.Fatal("[DONE] without a usage chunk")
			}
			return *got
		}
		var chunk struct {
			Usage *usage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		if chunk.Usage != nil {
			got = chunk.Usage
		}
	}
	t.Fatalf("stream ended without [DONE]: %v", sc.Err())
	return usage{}
}
