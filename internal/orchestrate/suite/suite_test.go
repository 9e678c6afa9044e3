package suite_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/request/workload"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/testphase"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

// sweepConcurrency is the concurrency-sweep point each model runs: the
// smallest at which requests share the engine's batch.
const sweepConcurrency = 2

// TestEveryModelPresetThroughTheSuite runs, for every model preset of the
// simulator, what a user's first suite run does: the profile's start (the
// startup point, one chat request) and a point of the concurrency sweep at
// quick size, on the chat and on the completions endpoint, then token-id
// prompts at the edge of the model's vocabulary, all through the in-process
// simulator's HTTP API. No request may fail, every prompt must count one
// token per word, and an id past the vocabulary must get vLLM's 400
// (issue 23: the simulator's tokenizer hashed every word into Qwen's
// vocabulary, and every Llama request got a 400). Every preset serves in
// real time (40 s under -race): it runs in the alone phase's suite lane.
func TestEveryModelPresetThroughTheSuite(t *testing.T) {
	testphase.Alone(t)
	testphase.Lane(t, testphase.LaneSuite)
	g, ok := presets.LookupGPU("h200")
	if !ok {
		t.Fatal("no h200 preset")
	}
	for _, model := range presets.ModelPresetNames() {
		t.Run(model, func(t *testing.T) {
			m, _ := presets.LookupModel(model)
			if m.Pooling {
				t.Skip("a pooling model serves /v1/embeddings, not the suite's chat scenarios: the opt-in embedding profile (vllmperf run --endpoint embeddings)")
			}
			// The smallest tensor-parallel size (a power of two) whose share
			// of the 16-bit weights takes at most half an H200, so that the
			// 70B preset starts too.
			tp := 1
			for 2*m.Params/float64(tp) > g.MemBytes/2 {
				tp *= 2
			}
			s, err := suite.New(suite.Config{
				Server:  []server.Option{server.WithBackend(server.KindSim), server.WithModel(model)},
				Size:    scenario.Quick,
				SimArgs: []string{"--sim-gpu", g.Name, "--tensor-parallel-size", fmt.Sprint(tp)},
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			ss, err := s.Start(ctx, "basic")
			if err != nil {
				t.Fatal(err) // the startup point's request failed, or the start did
			}
			defer func() {
				if err := ss.Close(context.WithoutCancel(ctx)); err != nil {
					t.Error(err)
				}
			}()
			noFailures(t, ss.Startup, ss.Server.Model())
			points, err := ss.Points("concurrency-sweep")
			if err != nil {
				t.Fatal(err)
			}
			var pt scenario.Point
			for _, p := range points {
				if p.Load.Concurrency == sweepConcurrency {
					pt = p
				}
			}
			if pt.Scenario == nil {
				t.Fatalf("concurrency-sweep has no point at concurrency %d", sweepConcurrency)
			}
			for _, ep := range []openai.Endpoint{openai.Chat, openai.Completions} {
				p := pt
				p.Key += "/endpoint=" + string(ep)
				p.Classes = append([]workload.Class(nil), pt.Classes...)
				for i := range p.Classes {
					p.Classes[i].Config.Endpoint = ep
				}
				r, err := ss.Run(ctx, p)
				if err != nil {
					t.Fatalf("%s: %v", p.Key, err)
				}
				noFailures(t, r, ss.Server.Model())
			}
			// Token-id prompts: the first and last id of the model's own
			// vocabulary are taken, one past the last gets vLLM's 400.
			base, served := ss.Server.BaseURL(), ss.Server.Model()
			if code, body := completeIDs(ctx, t, base, served, 0, int64(m.Vocab-1)); code != http.StatusOK {
				t.Errorf("token ids 0 and %d: HTTP %d %s, want 200", m.Vocab-1, code, body)
			}
			want := fmt.Sprintf("Token id %d is out of vocabulary", m.Vocab)
			if code, body := completeIDs(ctx, t, base, served, 0, int64(m.Vocab)); code != http.StatusBadRequest || !strings.Contains(body, want) {
				t.Errorf("token id %d: HTTP %d %s, want 400 %q", m.Vocab, code, body, want)
			}
		})
	}
}

// completeIDs sends a completion whose prompt is ids and returns the
// status and body.
func completeIDs(ctx context.Context, t *testing.T, base, model string, ids ...int64) (int, string) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"model": model, "prompt": ids, "max_tokens": 2})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/completions", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// noFailures fails the test unless every request of r completed, some did,
// and each prompt counted one token per word (usage.prompt_tokens: the
// simulator adds no chat template).
func noFailures(t *testing.T, r *suite.Run, model string) {
	t.Helper()
	sum := r.Result.Summary
	if sum.Failed != 0 || sum.Completed == 0 || sum.Completed != sum.Requests {
		t.Errorf("%s: %d of %d requests completed, %d failed %v (e.g. %v)", r.Name, sum.Completed, sum.Requests, sum.Failed, sum.FailedByKind, sum.ErrorExamples)
		return
	}
	classes := r.Result.Point.Classes
	if len(classes) != 1 {
		t.Fatalf("%s: %d request classes, want 1 (the prompt length is one class's)", r.Name, len(classes))
	}
	cfg := classes[0].Config
	cfg.Model = model
	g, err := workload.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	words := g.Config().PromptTokens // its fixture's words and the unique ones
	if got, want := sum.TotalInputTokens, sum.Completed*words; got != want {
		t.Errorf("%s: %d prompt tokens over %d requests, want %d (%d words each, one token per word)", r.Name, got, sum.Completed, want, words)
	}
}
