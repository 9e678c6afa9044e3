package pipeline

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/run/result"
	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/target/scrape"
)

// loraStream is the PCG stream of the adapter draw, apart from the
// prompts' and the arrivals' generators.
const loraStream = 0x4c6f5241 // "LoRA"

// WithLoRAModules spreads the requests over LoRA adapters, as vllm bench
// serve --lora-modules does: each request names one adapter, drawn at
// random (seeded by WithSeed) instead of the base model. Run checks that
// the server lists every adapter, and result.Result.Adapters has a summary per
// adapter.
func WithLoRAModules(names ...string) Option {
	return func(o *options) { o.lora = slices.Clone(names) }
}

// adapterOf is the adapter request i goes to: a pure function of the
// seed and i, so a warm-up or a retry draws the same one.
func adapterOf(names []string, seed uint64, i int) string {
	r := rand.New(rand.NewPCG(seed^loraStream, uint64(i)))
	return names[r.IntN(len(names))]
}

// withAdapters makes request i of next name its adapter.
func withAdapters(next func(int) openai.Request, names []string, seed uint64) func(int) openai.Request {
	if len(names) == 0 {
		return next
	}
	return func(i int) openai.Request {
		r := next(i)
		r.Model = adapterOf(names, seed, i)
		return r
	}
}

// checkAdapters fails unless the server lists every adapter in names at
// GET /v1/models: a request for one it does not serve would fail with
// 404, every one of them.
func checkAdapters(ctx context.Context, client *openai.Client, names []string) error {
	if len(names) == 0 {
		return nil
	}
	models, err := client.Models(ctx)
	if err != nil {
		return fmt.Errorf("harness: --lora-modules: the adapters were not checked against the server's: %w", err)
	}
	served := make([]string, len(models))
	for i, m := range models {
		served[i] = m.ID
	}
	var missing []string
	for _, n := range names {
		if !slices.Contains(served, n) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return &AdapterError{Missing: missing, Served: served}
	}
	return nil
}

// AdapterError is a run whose --lora-modules names adapters the server
// does not list at /v1/models.
type AdapterError struct {
	Missing, Served []string
}

func (e *AdapterError) Error() string {
	return fmt.Sprintf("the server does not serve the LoRA adapter(s) %s (GET /v1/models lists %s): start vLLM with --enable-lora --lora-modules %s=PATH, or name served adapters",
		strings.Join(e.Missing, ", "), strings.Join(e.Served, ", "), e.Missing[0])
}

// summarizeAdapters computes a summary per adapter over the measured
// window, in the order names gives them.
func summarizeAdapters(r *result.Result, names []string, seed uint64, slo stats.SLO) error {
	if len(names) == 0 {
		return nil
	}
	lr := r.Load
	r.AdapterNames = slices.Clone(names)
	r.Adapters = map[string]*stats.Summary{}
	for _, name := range names {
		var own []sample.Sample
		for _, s := range lr.Samples {
			if adapterOf(names, seed, s.Index) == name {
				own = append(own, s)
			}
		}
		sum, err := stats.SummarizeWith(own, lr.Start, lr.End, stats.Options{SLO: slo})
		if err != nil {
			return fmt.Errorf("harness: LoRA adapter %s: %w", name, err)
		}
		r.Adapters[name] = sum
	}
	return nil
}

// checkServedAdapters compares the adapters the run's requests named with
// those vllm:lora_requests_info says the server ran: the series whose
// value (the time of their last update) moved between the run's first
// and last snapshots, or appeared. vLLM keeps a series per combination
// of adapters seen, so their running_lora_adapters labels, split at the
// commas, are the adapters run during the load. An adapter sent but
// never run, or one run but not sent (other traffic), is a warning.
func checkServedAdapters(r *result.Result, names []string, seed uint64) {
	if len(names) == 0 || r.After == nil || r.Load == nil {
		return
	}
	name := r.After.Family().Metrics.Prefix + scrape.LoRARequestsInfo // as the server exposes it
	after, err := r.After.Metric(scrape.LoRARequestsInfo)
	if err != nil {
		r.Warnings = append(r.Warnings, fmt.Errorf("LoRA adapters: the adapters the server ran were not checked: %w", err))
		return
	}
	before := map[string]float64{}
	if r.Before != nil {
		if m, err := r.Before.Metric(scrape.LoRARequestsInfo); err == nil {
			for _, s := range m.Series {
				before[seriesKey(s.Labels)] = s.Value
			}
		}
	}
	ran := map[string]bool{}
	for _, s := range after.Series {
		if v, ok := before[seriesKey(s.Labels)]; ok && v == s.Value {
			continue // not updated during the run
		}
		for _, a := range strings.Split(s.Labels["running_lora_adapters"], ",") {
			if a = strings.TrimSpace(a); a != "" {
				ran[a] = true
			}
		}
	}
	sent := map[string]bool{}
	for _, s := range r.Load.Samples {
		if s.OK() {
			sent[adapterOf(names, seed, s.Index)] = true
		}
	}
	var never, other []string
	for _, n := range names {
		if sent[n] && !ran[n] {
			never = append(never, n)
		}
	}
	for a := range ran {
		if !sent[a] {
			other = append(other, a)
		}
	}
	slices.Sort(other)
	if len(never) > 0 {
		r.Warnings = append(r.Warnings, fmt.Errorf("LoRA adapters: requests named %s and succeeded, but %s never showed it running: the server served them another way (a base model under that name?)", strings.Join(never, ", "), name))
	}
	if len(other) > 0 {
		r.Warnings = append(r.Warnings, fmt.Errorf("LoRA adapters: %s showed %s running, which no request of this run named: other traffic reached the server", name, strings.Join(other, ", ")))
	}
	r.AdaptersRan = slices.Sorted(maps.Keys(ran))
}

// seriesKey is a series' labels as one comparable string.
func seriesKey(labels map[string]string) string {
	keys := slices.Sorted(maps.Keys(labels))
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + labels[k] + "\x00")
	}
	return b.String()
}
