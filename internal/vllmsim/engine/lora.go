package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vllmperf/vllmperf/internal/vllmsim/argcheck"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

// LoRA serving follows vLLM's own code at commit 005a810bc40f (the 0.11
// line): the flags of vllm/engine/arg_utils.py and LoRAConfig, the
// scheduler's max_loras rule of vllm/v1/core/sched/scheduler.py (a
// waiting request whose adapter would be one too many is skipped, and the
// requests behind it may still be admitted), and vllm:lora_requests_info of
// vllm/v1/metrics/loggers.py (labels max_lora, waiting_lora_adapters and
// running_lora_adapters, the adapters comma-joined; the value is the time of
// the last update, and every label combination seen stays exposed).

// LoRAConfig are vllm serve's LoRA flags.
type LoRAConfig struct {
	// EnableLoRA is --enable-lora: serve LoRA adapters.
	EnableLoRA bool
	// LoRAModules are --lora-modules: the adapters served next to the
	// base model, each addressed by its name.
	LoRAModules []LoRAModule
	// MaxLoRAs is --max-loras, the most distinct adapters in one batch
	// (0: DefaultMaxLoRAs).
	MaxLoRAs int
	// MaxLoRARank is --max-lora-rank, one of MaxLoRARanks (0:
	// DefaultMaxLoRARank). vLLM pads every adapter's weights to it, so the
	// kernels' cost follows it rather than an adapter's own rank.
	MaxLoRARank int
}

// LoRAModule is one --lora-modules entry: name=path, or vLLM's JSON form
// {"name": ..., "path": ..., "base_model_name": ...}.
type LoRAModule struct {
	Name          string `json:"name"`
	Path          string `json:"path"`
	BaseModelName string `json:"base_model_name,omitempty"`
}

// vLLM's LoRA defaults.
const (
	DefaultMaxLoRAs    = 1
	DefaultMaxLoRARank = 16
)

// MaxLoRARanks are --max-lora-rank's choices (vLLM's LoRAConfig).
var MaxLoRARanks = []int{1, 8, 16, 32, 64, 128, 256, 320, 512}

// loraPerLayerLaunch is the fixed cost per layer of one step that holds
// LoRA requests: vLLM's punica kernels run a shrink and an expand for
// each of the layer's four stacked projections (qkv, o, gate_up, down),
// eight small launches a layer. Assumed (about 2.5 µs a launch), not
// fitted: no public per-step figure separates it.
const loraPerLayerLaunch = 20 * time.Microsecond

// maxLoRAs is the effective --max-loras.
func (c LoRAConfig) maxLoRAs() int {
	if c.MaxLoRAs == 0 {
		return DefaultMaxLoRAs
	}
	return c.MaxLoRAs
}

// maxLoRARank is the effective --max-lora-rank.
func (c LoRAConfig) maxLoRARank() int {
	if c.MaxLoRARank == 0 {
		return DefaultMaxLoRARank
	}
	return c.MaxLoRARank
}

// Adapter returns the --lora-modules entry named name.
func (c LoRAConfig) Adapter(name string) (LoRAModule, bool) {
	i := slices.IndexFunc(c.LoRAModules, func(m LoRAModule) bool { return m.Name == name })
	if i < 0 {
		return LoRAModule{}, false
	}
	return c.LoRAModules[i], true
}

// loraChecks are the rules of the LoRA flags, in --help order.
var loraChecks = []fieldCheck{
	{"lora-modules", func(c Config) error {
		if len(c.LoRAModules) > 0 && !c.EnableLoRA {
			return errors.New("adapters need LoRA enabled: add --enable-lora")
		}
		seen := map[string]bool{}
		for _, m := range c.LoRAModules {
			switch {
			case strings.TrimSpace(m.Name) == "" || strings.TrimSpace(m.Path) == "":
				return fmt.Errorf("an adapter needs a name and a path: write NAME=PATH, e.g. sql-lora=/adapters/sql")
			case seen[m.Name]:
				return fmt.Errorf("adapter %q is given twice: give each adapter its own name", m.Name)
			case slices.Contains(c.ServedNames(), m.Name):
				return fmt.Errorf("adapter %q has the name of the base model: name it apart", m.Name)
			}
			seen[m.Name] = true
		}
		return nil
	}},
	{"max-loras", func(c Config) error { return argcheck.IntRange(c.MaxLoRAs, 0, math.MaxInt) }},
	{"max-lora-rank", func(c Config) error {
		if c.MaxLoRARank == 0 {
			return nil
		}
		return argcheck.IntChoice(c.MaxLoRARank, MaxLoRARanks)
	}},
}

// ParseLoRAModule reads one --lora-modules value: NAME=PATH or the JSON
// object vLLM takes.
func ParseLoRAModule(v string) (LoRAModule, error) {
	if strings.HasPrefix(strings.TrimSpace(v), "{") {
		var m LoRAModule
		dec := json.NewDecoder(strings.NewReader(v))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			return m, fmt.Errorf("invalid JSON adapter '%s': %v (want {\"name\": ..., \"path\": ...})", v, err)
		}
		return m, nil
	}
	name, path, ok := strings.Cut(v, "=")
	if !ok {
		return LoRAModule{}, fmt.Errorf("invalid adapter '%s': write NAME=PATH, e.g. sql-lora=/adapters/sql", v)
	}
	return LoRAModule{Name: name, Path: path}, nil
}

// loraAdmits reports whether s may join the running requests under
// max_loras: it asks for no adapter, or for one already running, or the
// running requests hold fewer than max_loras adapters.
func (e *Engine) loraAdmits(s *seq) bool { return e.loraFits(e.running, s) }

// loraFits reports whether s may join running under max_loras (both
// engines' rule).
func (b *base) loraFits(running []*seq, s *seq) bool {
	lc := b.r.cfg.LoRAConfig
	if !lc.EnableLoRA || s.req.LoRA == "" {
		return true
	}
	ads := adaptersOf(running)
	return slices.Contains(ads, s.req.LoRA) || len(ads) < lc.maxLoRAs()
}

// nextAdmissible is the index in the waiting queue of the first request
// max_loras lets in, -1 when none.
func (e *Engine) nextAdmissible() int {
	return slices.IndexFunc(e.waiting, e.loraAdmits)
}

// adaptersOf lists the adapters of seqs, each once, in order.
func adaptersOf(seqs []*seq) []string {
	var out []string
	for _, s := range seqs {
		if s.req.LoRA != "" && !slices.Contains(out, s.req.LoRA) {
			out = append(out, s.req.LoRA)
		}
	}
	return out
}

// loraCost is the time a step's LoRA requests add: the launches of
// loraPerLayerLaunch, the shrink and expand FLOPs of each LoRA token
// (2 × rank × Σ(in + out) over a layer's projections, every layer) at the
// GPU's prefill efficiency, and each active adapter's weights read once.
func (e *Engine) loraCost(p plan) time.Duration {
	if !e.r.cfg.EnableLoRA {
		return 0
	}
	tokens := 0
	var active []*seq
	for _, it := range p.items {
		if it.s.req.LoRA != "" {
			tokens += it.n
			active = append(active, it.s)
		}
	}
	if tokens == 0 {
		return 0
	}
	r, m := e.r, e.r.model
	rank := float64(r.cfg.maxLoRARank())
	dims := float64(m.Layers) * loraDims(m)
	tp := float64(r.cfg.TensorParallelSize)
	flops := 2 * rank * dims * float64(tokens) / tp
	bytes := float64(len(adaptersOf(active))) * rank * dims * r.weightByte / tp
	compute := flops / (r.gpu.PeakFLOPS * r.prefillEff)
	memory := bytes / (r.gpu.MemBandwidth * r.gpu.DecodeEfficiency)
	return time.Duration(m.Layers)*loraPerLayerLaunch + secs(compute+memory)
}

// loraDims is Σ(in + out) over one layer's projections (q, k, v, o, gate,
// up, down): the width a rank-r adapter adds r × that many weights for. The
// MLP's intermediate size is what the layer's parameters leave after
// attention.
func loraDims(m presets.ModelPreset) float64 {
	h := float64(m.Hidden)
	q := float64(m.QHeads * m.HeadDim)
	kv := float64(m.KVHeads * m.HeadDim)
	attn := h*q + 2*h*kv + q*h
	inter := math.Max(0, m.NonEmbeddingParams/float64(m.Layers)-attn) / (3 * h)
	return (h + q) + 2*(h+kv) + (q + h) + 3*(h+inter)
}

// loraInfo is vllm:lora_requests_info: one series per combination of
// adapters seen, its value the time of the last step that saw it.
type loraInfo struct {
	vec      *prometheus.GaugeVec
	maxLoRAs string
}

// set records the adapters of the running and waiting requests at now.
func (l *loraInfo) set(running, waiting []*seq, now time.Time) {
	if l == nil {
		return
	}
	l.vec.WithLabelValues(l.maxLoRAs, strings.Join(adaptersOf(waiting), ","), strings.Join(adaptersOf(running), ",")).
		Set(float64(now.UnixNano()) / 1e9)
}
