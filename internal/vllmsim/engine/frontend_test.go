package engine

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

// burst sends n requests of the given lengths at once to a Simulation of
// cfg and returns their TTFTs, the peak of num_requests_waiting seen at any
// step, the peak of requests still in the front end, and the mean queue
// time the engine recorded.
func burst(t *testing.T, cfg Config, n, in, out int) (ttft []time.Duration, waitingPeak, frontendPeak int, queueMean time.Duration) {
	t.Helper()
	reg := prometheus.NewRegistry()
	s := newSim(t, cfg, reg)
	var arr []simReq
	for i := range n {
		arr = append(arr, simReq{req: Request{PromptTokens: prompt(in, 1000*i+1), MaxTokens: out, IgnoreEOS: true}})
	}
	s.run(arr, nil)
	for _, r := range s.recs {
		ttft = append(ttft, r.ttft())
	}
	p := s.sm.Peaks()
	return ttft, s.maxWait, p.Frontend, time.Duration(histMean(t, reg, "vllm:request_queue_time_seconds") * float64(time.Second))
}

// histMean is a histogram's sum ÷ count on reg.
func histMean(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			h := mf.GetMetric()[0].GetHistogram()
			return h.GetSampleSum() / float64(h.GetSampleCount())
		}
	}
	t.Fatalf("no histogram %s", name)
	return 0
}

func mean(d []time.Duration) time.Duration {
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return sum / time.Duration(len(d))
}

// TestFrontendBurst: hundreds of requests at once queue in the API server,
// not in the engine. TTFT (from the HTTP arrival, as vLLM's histogram)
// includes that wait; num_requests_waiting and the engine's queue time do
// not. Without the front end (Offline) the same burst lands in the engine
// at once.
func TestFrontendBurst(t *testing.T) {
	cfg := Defaults(Config{GPU: "h100", Model: "Qwen/Qwen3-8B", EnableChunkedPrefill: true, EnablePrefixCaching: true})
	ttft, waiting, inFrontend, queue := burst(t, cfg, 500, 233, 64)
	fe := cfg
	fe.Offline = true
	ttftOff, waitingOff, inFrontendOff, _ := burst(t, fe, 500, 233, 64)
	t.Logf("500 at once: mean TTFT %v (engine queue %v), waiting peak %d, front-end peak %d; offline: mean TTFT %v, waiting peak %d",
		mean(ttft), queue, waiting, inFrontend, mean(ttftOff), waitingOff)
	if inFrontend < 400 || inFrontendOff != 0 {
		t.Errorf("front-end peak %d with the API server, %d offline: want most of the burst there, and none offline", inFrontend, inFrontendOff)
	}
	// How much of the burst reaches the engine's queue at once depends on
	// whether the API server's input work (fitted costs) or the engine's
	// prefill is slower; what must hold is that requests still in the front
	// end are not counted there: offline all 500 wait at once, with the front
	// end fewer.
	if waitingOff < 400 || waiting >= waitingOff*9/10 {
		t.Errorf("num_requests_waiting peak %d (offline %d): the front end's queue must not show in the engine's gauge", waiting, waitingOff)
	}
	if queue > mean(ttft)/2 {
		t.Errorf("engine queue time %v of a mean TTFT %v: want the front end to dominate the wait", queue, mean(ttft))
	}
	if mean(ttft) < 2*mean(ttftOff)/3 {
		t.Errorf("mean TTFT %v with the front end, %v without: want the front end's queue in it", mean(ttft), mean(ttftOff))
	}
}

// TestFrontendLatencyAndWork: at concurrency 1 a request's TTFT carries the
// front end's latency and input work on top of the engine's prefill; the
// work grows with the prompt, the slow detokenizer costs more per output
// token (a later request waits longer behind it).
func TestFrontendLatencyAndWork(t *testing.T) {
	g, _ := presets.LookupGPU("h100")
	one := func(mod func(*Config), in int) time.Duration {
		cfg := Defaults(Config{GPU: "h100", Model: "Qwen/Qwen3-8B", EnableChunkedPrefill: true})
		mod(&cfg)
		s := newSim(t, cfg, nil)
		s.run([]simReq{{req: Request{PromptTokens: prompt(in, 5), MaxTokens: 2, IgnoreEOS: true}}}, nil)
		return s.recs[0].ttft()
	}
	served := one(func(*Config) {}, 200)
	offline := one(func(c *Config) { c.Offline = true }, 200)
	work := g.Frontend.Latency + g.Frontend.Base + 200*g.Frontend.PerPromptToken
	if d := served - offline; d < work-time.Microsecond || d > work+time.Microsecond {
		t.Errorf("TTFT %v served, %v offline: the difference %v should be the front end's %v", served, offline, d, work)
	}
	long := one(func(*Config) {}, 2000) - one(func(c *Config) { c.Offline = true }, 2000)
	if want := work + 1800*g.Frontend.PerPromptToken; long < want-time.Microsecond || long > want+time.Microsecond {
		t.Errorf("front end for 2000 tokens %v, want %v", long, want)
	}
	// A request arrives while a hundred others stream their tokens: with the
	// slow detokenizer their output work outgrows the event loop and the
	// request's input slices wait behind it.
	behind := func(mode string) time.Duration {
		cfg := Defaults(Config{GPU: "h100", Model: "Qwen/Qwen3-8B", EnableChunkedPrefill: true, TokenizerMode: mode})
		g.Frontend.SlowDetokenizeFactor = 5 // the mechanism, whatever the fitted factor
		cfg.GPUSpec = &g
		s := newSim(t, cfg, nil)
		var arr []simReq
		for i := range 100 {
			arr = append(arr, simReq{req: Request{PromptTokens: prompt(50, i), MaxTokens: 400, IgnoreEOS: true}})
		}
		arr = append(arr, simReq{at: 2 * time.Second, req: Request{PromptTokens: prompt(50, 999), MaxTokens: 2, IgnoreEOS: true}})
		s.run(arr, nil)
		return s.recs[100].ttft()
	}
	if fast, slow := behind("auto"), behind("mistral"); slow <= fast {
		t.Errorf("TTFT behind a stream: %v with auto, %v with mistral: want the slow detokenizer to delay it", fast, slow)
	}
}

// TestFrontendChatRequest: a chat request's input work carries the chat
// template's ChatRequest on top of a completion's, in the loop: at
// concurrency 1 its TTFT is exactly that much longer, and in a burst every
// request behind it waits for it too.
func TestFrontendChatRequest(t *testing.T) {
	g, _ := presets.LookupGPU("h100")
	// the mechanism, whatever the fitted figures (the default release, 0.11.0, takes ChatRequest011)
	g.Frontend.ChatRequest, g.Frontend.ChatRequest011 = 5*time.Millisecond, 5*time.Millisecond
	ttfts := func(chat bool, n int) []time.Duration {
		cfg := Defaults(Config{GPU: "h100", Model: "Qwen/Qwen3-8B", EnableChunkedPrefill: true, APIServerCount: 1})
		cfg.GPUSpec = &g
		s := newSim(t, cfg, nil)
		var arr []simReq
		for i := range n {
			arr = append(arr, simReq{req: Request{PromptTokens: prompt(200, 7+i), MaxTokens: 2, IgnoreEOS: true, Chat: chat}})
		}
		s.run(arr, nil)
		var out []time.Duration
		for _, r := range s.recs {
			out = append(out, r.ttft())
		}
		return out
	}
	if d := ttfts(true, 1)[0] - ttfts(false, 1)[0]; d < g.Frontend.ChatRequest-time.Microsecond || d > g.Frontend.ChatRequest+time.Microsecond {
		t.Errorf("chat TTFT - completion TTFT = %v, want ChatRequest %v", d, g.Frontend.ChatRequest)
	}
	// 100 chats at once through one loop: the last waits for the others'
	// chat templates, so the mean TTFT grows by about 50 × ChatRequest.
	chat, completion := mean(ttfts(true, 100)), mean(ttfts(false, 100))
	if d := chat - completion; d < 40*g.Frontend.ChatRequest {
		t.Errorf("burst of 100: mean TTFT %v chat, %v completion: want the chat templates (%v each) to queue in the loop", chat, completion, g.Frontend.ChatRequest)
	}
}

// TestPrefillEfficiencyBySize: prefill reaches the preset's efficiency from
// PrefillRefHidden up and less on smaller models.
func TestPrefillEfficiencyBySize(t *testing.T) {
	g := presets.GPUPreset{PrefillEfficiency: 0.8, PrefillSmallModelExponent: 1}
	tests := []struct {
		hidden int
		want   float64
	}{
		{8192, 0.8},     // bigger than the reference: capped at the preset's
		{4096, 0.8},     // the reference size
		{1024, 0.8 / 4}, // a quarter of the width: a quarter with exponent 1
		{896, 0.8 * 896 / 4096},
	}
	for _, tt := range tests {
		if got := prefillEfficiency(g, tt.hidden); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("hidden %d: %v, want %v", tt.hidden, got, tt.want)
		}
	}
}

// TestPrefillEfficiencyByArch: a fitted preset takes the prefill share of
// its architecture: Hopper's on h100 and h200, Ampere's on a100 and a10,
// Ada's on l4, l40s and rtx4090; the other costs are the same on every
// architecture.
func TestPrefillEfficiencyByArch(t *testing.T) {
	c := presets.Costs{PrefillEfficiency: 0.7, AmperePrefillEfficiency: 0.55, HopperPrefillEfficiency: 0.4, DecodeEfficiency: 0.8, StepOverhead: time.Millisecond}
	tests := []struct {
		preset string
		arch   presets.Arch
		want   float64
	}{
		{"h100", presets.Hopper, 0.4},
		{"h200", presets.Hopper, 0.4},
		{"a100", presets.Ampere, 0.55},
		{"a10", presets.Ampere, 0.55},
		{"l4", presets.Ada, 0.7},
		{"l40s", presets.Ada, 0.7},
		{"rtx4090", presets.Ada, 0.7},
	}
	for _, tt := range tests {
		g, ok := presets.LookupGPU(tt.preset)
		if !ok {
			t.Fatalf("no preset %s", tt.preset)
		}
		if g.Arch != tt.arch {
			t.Errorf("%s: architecture %q, want %q", tt.preset, g.Arch, tt.arch)
		}
		g = g.WithCosts(c)
		if g.PrefillEfficiency != tt.want || g.DecodeEfficiency != 0.8 || g.StepOverhead != time.Millisecond {
			t.Errorf("%s with costs: prefill %v, decode %v, step %v; want prefill %v, decode 0.8, step 1ms",
				tt.preset, g.PrefillEfficiency, g.DecodeEfficiency, g.StepOverhead, tt.want)
		}
	}
}

// TestSimulationLimit: Run stops at the step limit with an error naming it.
func TestSimulationLimit(t *testing.T) {
	s, err := NewSimulation(defaultCfg(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Submit(Request{PromptTokens: prompt(10, 1), MaxTokens: 100, IgnoreEOS: true}, func(Output) {}); err != nil {
		t.Fatal(err)
	}
	if err := s.Run(10); !errors.Is(err, ErrSimulationTooLong) || s.Steps() != 10 {
		t.Errorf("Run(10) = %v after %d steps, want ErrSimulationTooLong after 10", err, s.Steps())
	}
	if _, err := NewSimulation(Config{FixedTTFT: time.Millisecond, FixedITL: time.Millisecond}, nil); err == nil {
		t.Error("NewSimulation took a fixed-timing configuration")
	}
}

// TestFrontendChatRequestByRelease: a chat request's input work carries
// ChatRequest before vLLM 0.11 and ChatRequest011 from 0.11 on. At
// concurrency 1 the chat's TTFT on 0.11 is exactly their difference
// longer than the same chat's on 0.9.2 or 0.10.1.1; completions pay
// neither.
func TestFrontendChatRequestByRelease(t *testing.T) {
	g, _ := presets.LookupGPU("h100")
	g.Frontend.ChatRequest, g.Frontend.ChatRequest011 = 3*time.Millisecond, 11*time.Millisecond
	ttft := func(release string, chat bool) time.Duration {
		cfg := Defaults(Config{GPU: "h100", Model: "Qwen/Qwen3-8B", APIServerCount: 1, Release: release})
		cfg.GPUSpec = &g
		s := newSim(t, cfg, nil)
		s.run([]simReq{{req: Request{PromptTokens: prompt(200, 7), MaxTokens: 2, IgnoreEOS: true, Chat: chat}}}, nil)
		return s.recs[0].ttft()
	}
	old := ttft("0.9.2", true)
	tests := []struct {
		release string
		chat    bool
		more    time.Duration // TTFT beyond a 0.9.2 chat's
	}{
		{"0.9.2", true, 0},
		{"0.10.1.1", true, 0},
		{"0.11.0", true, g.Frontend.ChatRequest011 - g.Frontend.ChatRequest},
		{"0.11", true, g.Frontend.ChatRequest011 - g.Frontend.ChatRequest},
		{"", true, g.Frontend.ChatRequest011 - g.Frontend.ChatRequest}, // DefaultRelease
		{"0.19.0", true, g.Frontend.ChatRequest011 - g.Frontend.ChatRequest},
		{"0.9.2", false, -g.Frontend.ChatRequest},
		{"0.11.0", false, -g.Frontend.ChatRequest},
	}
	for _, tt := range tests {
		got := ttft(tt.release, tt.chat) - old
		if d := got - tt.more; d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("release %q, chat %v: TTFT %v beyond a 0.9.2 chat's, want %v", tt.release, tt.chat, got, tt.more)
		}
	}
}
