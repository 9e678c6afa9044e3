package main

import (
	"errors"
	"fmt"
	"math"

	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/fixtures"
	"github.com/vllmperf/vllmperf/internal/harness"
	"github.com/vllmperf/vllmperf/internal/harness/dataset"
	"github.com/vllmperf/vllmperf/internal/harness/load"
	"github.com/vllmperf/vllmperf/internal/harness/scenario"
	"github.com/vllmperf/vllmperf/internal/harness/workload"
)

// datasetFlags are `vllmperf run`'s data set flags (docs/workloads.md).
type datasetFlags struct {
	file       string
	numPrompts int
	filter     dataset.Filter
	speed      float64
}

func (d *datasetFlags) register(f *pflag.FlagSet) {
	f.StringVar(&d.file, "dataset", "", "send a data set's prompts: a ShareGPT .json, a JSONL of {prompt|messages, output_len}, or a trace (JSONL with timestamp, replayed at its pace without --rate/--concurrency); a path or a built-in name (sharegpt.json, prompts.jsonl, trace.jsonl)")
	f.IntVar(&d.numPrompts, "num-prompts", 0, "with --dataset: how many entries to sample with --seed (0: all that pass the length filters)")
	f.IntVar(&d.filter.MinPrompt, "min-prompt-len", 0, "with --dataset: drop entries whose prompt has fewer words (ShareGPT default 4)")
	f.IntVar(&d.filter.MaxPrompt, "max-prompt-len", 0, "with --dataset: drop entries whose prompt has more words (ShareGPT default 1024)")
	f.IntVar(&d.filter.MinOutput, "min-output-len", 0, "with --dataset: drop entries asking for fewer output tokens (ShareGPT default 4)")
	f.IntVar(&d.filter.MaxOutput, "max-output-len", 0, "with --dataset: drop entries asking for more output tokens")
	f.Float64Var(&d.speed, "trace-speed", 1, "with a trace --dataset: replay it this many times as fast (> 0)")
}

// check refuses the data set flags without --dataset.
func (d *datasetFlags) check(flags *pflag.FlagSet) error {
	for _, name := range []string{"num-prompts", "min-prompt-len", "max-prompt-len", "min-output-len", "max-output-len", "trace-speed"} {
		if d.file == "" && flags.Changed(name) {
			return usagef("--%s selects from a data set: add --dataset FILE", name)
		}
	}
	if !(d.speed > 0) || math.IsInf(d.speed, 0) {
		return usagef("--trace-speed %v: want a positive factor (2 replays a trace twice as fast)", d.speed)
	}
	return nil
}

// apply selects the data set and makes it the run's class
// (scenario.UseDataset).
func (d *datasetFlags) apply(flags *pflag.FlagSet, seed uint64, cfg *load.Config, class *workload.Class) error {
	for _, name := range []string{"prompt-tokens", "shared-prefix-tokens"} {
		if flags.Changed(name) {
			return usagef("--%s makes synthetic prompts: --dataset sends the data set's own; drop one of them", name)
		}
	}
	set, err := dataset.Load(fixtures.DatasetFS(), d.file, dataset.Options{NumPrompts: d.numPrompts, Seed: seed, Filter: d.filter, Speed: d.speed})
	if err == nil {
		err = scenario.UseDataset(set, cfg, class, flags.Changed("max-tokens"))
	}
	if err == nil && flags.Changed("trace-speed") && cfg.Arrivals == nil {
		err = errors.New("--trace-speed replays a trace's timestamps, which --concurrency or --rate replace (or the file has none): drop one of them")
	}
	if err != nil {
		return usageError{fmt.Errorf("--dataset %s: %w", d.file, err)}
	}
	return nil
}

// contextError says which flags shorten a data set whose longest request
// does not fit the server's context.
func (d *datasetFlags) contextError(ce *harness.ContextError) error {
	return usagef("--dataset %s: its longest request needs %d prompt words + %d output tokens, more than the %d tokens the server accepts for %s (max_model_len on /v1/models): every such request would fail; drop them with --max-prompt-len and --max-output-len",
		d.file, ce.Longest.PromptWords, ce.Longest.MaxTokens, ce.MaxModelLen, ce.Model)
}
