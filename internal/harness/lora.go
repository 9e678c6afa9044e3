package harness

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/vllmperf/vllmperf/internal/harness/openai"
	"github.com/vllmperf/vllmperf/internal/harness/sample"
	"github.com/vllmperf/vllmperf/internal/harness/stats"
	"github.com/vllmperf/vllmperf/internal/harness/vllmfmt"
)

// loraStream is the PCG stream of the adapter draw, apart from the
// prompts' and the arrivals' generators.
const loraStream = 0x4c6f5241 // "LoRA"

// WithLoRAModules spreads the requests over LoRA adapters, as vllm bench
// serve --lora-modules does: each request names one adapter, drawn at
// random (seeded by WithSeed) instead of the base model. Run checks that
// the server lists every adapter, and Result.Adapters has a summary per
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
func (r *Result) summarizeAdapters(names []string, seed uint64, slo stats.SLO) error {
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

// writeAdapters writes each adapter's summary as vllm bench serve prints a
// run's, headed by the adapter's name.
func (r *Result) writeAdapters(w io.Writer) error {
	for _, name := range r.AdapterNames {
		if _, err := fmt.Fprintf(w, "\nLoRA adapter %s:\n", name); err != nil {
			return err
		}
		if err := vllmfmt.WriteText(w, r.Adapters[name]); err != nil {
			return err
		}
	}
	return nil
}
