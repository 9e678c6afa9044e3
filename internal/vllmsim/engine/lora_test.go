package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

// loraCfg is the default configuration serving adapters a, b and c, at
// most maxLoRAs a batch, without jitter.
func loraCfg(maxLoRAs, rank int) Config {
	cfg := defaultCfg()
	cfg.Jitter, cfg.ColdStart = 0, 0
	cfg.LoRAConfig = LoRAConfig{EnableLoRA: true, MaxLoRAs: maxLoRAs, MaxLoRARank: rank,
		LoRAModules: []LoRAModule{{Name: "a", Path: "/a"}, {Name: "b", Path: "/b"}, {Name: "c", Path: "/c"}}}
	return cfg
}

func loraReq(adapter string, base int) Request {
	return Request{PromptTokens: prompt(64, base), MaxTokens: 16, IgnoreEOS: true, LoRA: adapter}
}

func TestLoRAMaxLoRAsHoldsOtherAdapters(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxLoRAs int
		overlap  bool // does b's request run alongside a's?
	}{
		{"one adapter a batch: b waits for a", 1, false},
		{"two adapters a batch: both run", 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, loraCfg(tc.maxLoRAs, 16), nil)
			s.run([]simReq{{class: "a", req: loraReq("a", 1)}, {class: "b", req: loraReq("b", 2)}, {class: "base", req: loraReq("", 3)}}, nil)
			a, b, base := s.recs[0], s.recs[1], s.recs[2]
			assert.Equal(t, tc.overlap, b.first.Before(a.last), "b's first token %v, a's last %v", b.first.Sub(s.t0), a.last.Sub(s.t0))
			assert.True(t, base.first.Before(a.last), "a base-model request never waits on max_loras")
		})
	}
}

func TestLoRAWaitingRequestDoesNotBlockOthers(t *testing.T) {
	// With max_loras 1, a request for b behind a's is skipped, and a later
	// request for a (already running) is admitted past it, as vLLM's
	// scheduler does.
	s := newSim(t, loraCfg(1, 16), nil)
	s.run([]simReq{{class: "a", req: loraReq("a", 1)}, {class: "b", req: loraReq("b", 2)}, {at: time.Millisecond, class: "a2", req: loraReq("a", 3)}}, nil)
	a, b, a2 := s.recs[0], s.recs[1], s.recs[2]
	assert.True(t, a2.first.Before(a.last), "a's second request joins the batch")
	assert.False(t, b.first.Before(a2.last), "b waits while a's requests run")
}

func TestLoRACostGrowsWithRank(t *testing.T) {
	e2e := func(adapter string, rank int) time.Duration {
		s := newSim(t, loraCfg(1, rank), nil)
		s.run([]simReq{{class: "x", req: loraReq(adapter, 1)}}, nil)
		return s.recs[0].e2e()
	}
	base, r16, r128 := e2e("", 16), e2e("a", 16), e2e("a", 128)
	assert.Greater(t, r16, base, "an adapter's kernels cost time")
	assert.Greater(t, r128, r16, "a larger --max-lora-rank costs more")
	assert.Less(t, float64(r16)/float64(base), 1.5, "rank 16 on a 0.6B model adds a fraction, not a multiple")
}

func TestLoRARequestsInfo(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := newSim(t, loraCfg(1, 16), reg)
	s.run([]simReq{{class: "a", req: loraReq("a", 1)}, {class: "b", req: loraReq("b", 2)}}, nil)
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var series []string
	for _, mf := range mfs {
		if mf.GetName() != "vllm:lora_requests_info" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			assert.Equal(t, "1", l["max_lora"])
			assert.Greater(t, m.GetGauge().GetValue(), 1e9, "the value is the time of the last update")
			series = append(series, "running="+l["running_lora_adapters"]+" waiting="+l["waiting_lora_adapters"])
		}
	}
	assert.Contains(t, series, "running=a waiting=b", "b waited while a ran")
	assert.Contains(t, series, "running=b waiting=", "then b ran")
}

func TestLoRAConfigChecks(t *testing.T) {
	for _, tc := range []struct {
		name string
		lc   LoRAConfig
		want string // "" = valid
	}{
		{"adapters without --enable-lora", LoRAConfig{LoRAModules: []LoRAModule{{Name: "a", Path: "/a"}}}, "add --enable-lora"},
		{"an adapter named twice", LoRAConfig{EnableLoRA: true, LoRAModules: []LoRAModule{{Name: "a", Path: "/a"}, {Name: "a", Path: "/b"}}}, "given twice"},
		{"an adapter named as the base model", LoRAConfig{EnableLoRA: true, LoRAModules: []LoRAModule{{Name: presets.DefaultModel, Path: "/a"}}}, "name of the base model"},
		{"an adapter without a path", LoRAConfig{EnableLoRA: true, LoRAModules: []LoRAModule{{Name: "a"}}}, "NAME=PATH"},
		{"a rank vLLM does not take", LoRAConfig{EnableLoRA: true, MaxLoRARank: 12}, "argument --max-lora-rank: invalid choice"},
		{"a negative max-loras", LoRAConfig{EnableLoRA: true, MaxLoRAs: -1}, "argument --max-loras"},
		{"vLLM's defaults", LoRAConfig{EnableLoRA: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.LoRAConfig = tc.lc
			err := cfg.Validate()
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestParseLoRAModule(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want LoRAModule
		err  string
	}{
		{"sql-lora=/adapters/sql", LoRAModule{Name: "sql-lora", Path: "/adapters/sql"}, ""},
		{`{"name": "sql", "path": "/s", "base_model_name": "m"}`, LoRAModule{Name: "sql", Path: "/s", BaseModelName: "m"}, ""},
		{"sql-lora", LoRAModule{}, "write NAME=PATH"},
		{`{"name": "sql", "rank": 8}`, LoRAModule{}, "invalid JSON adapter"},
	} {
		got, err := ParseLoRAModule(tc.in)
		if tc.err != "" {
			require.Error(t, err, tc.in)
			assert.True(t, strings.Contains(err.Error(), tc.err), "%s: %v", tc.in, err)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got)
	}
}

// The fixed-timing engine keeps max_loras too: with one adapter a batch,
// b's request starts when a's has ended.
func TestLoRAMaxLoRAsFixedTiming(t *testing.T) {
	cfg := loraCfg(1, 16)
	cfg.FixedTTFT, cfg.FixedITL = 5*time.Millisecond, time.Millisecond
	e, err := NewFixed(cfg, nil)
	require.NoError(t, err)
	defer e.Close()
	chA, err := e.Submit(t.Context(), loraReq("a", 1))
	require.NoError(t, err)
	chB, err := e.Submit(t.Context(), loraReq("b", 2))
	require.NoError(t, err)
	a, b := drain(chA), drain(chB)
	require.NoError(t, a.err)
	require.NoError(t, b.err)
	assert.False(t, b.first.Before(a.times[len(a.times)-1]), "b's first token came before a's last")
}
