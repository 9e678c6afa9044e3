package runflags

import (
	"errors"
	"fmt"
	"math"

	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/fixtures"
	"github.com/vllmperf/vllmperf/internal/request/dataset"
	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/request/workload"
	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
)

// DatasetFlags are a run's data set flags (vllmperf run --dataset;
// docs/workloads.md): the file, how many entries to sample, the length
// filters and a trace's replay speed.
type DatasetFlags struct {
	File       string
	NumPrompts int
	Filter     dataset.Filter
	Speed      float64
}

// datasetOnly are the flags that select from a data set.
var datasetOnly = []string{"min-prompt-len", "max-prompt-len", "min-output-len", "max-output-len", "trace-speed"}

// Register defines the flags on f, with the CLI's defaults.
func (d *DatasetFlags) Register(f *pflag.FlagSet) {
	f.StringVar(&d.File, "dataset", "", "send a data set's prompts: a ShareGPT .json, a JSONL of {prompt|messages, output_len}, or a trace (JSONL with timestamp, replayed at its pace without --rate/--concurrency); a path or a built-in name (sharegpt.json, prompts.jsonl, trace.jsonl)")
	f.IntVar(&d.NumPrompts, "num-prompts", 0, "with --dataset: how many entries to sample with --seed (0: all that pass the length filters); without, vLLM's name for --requests (vLLM's default 1000 is not taken: a run is bounded on purpose)")
	f.IntVar(&d.Filter.MinPrompt, "min-prompt-len", 0, "with --dataset: drop entries whose prompt has fewer words (ShareGPT default 4)")
	f.IntVar(&d.Filter.MaxPrompt, "max-prompt-len", 0, "with --dataset: drop entries whose prompt has more words (ShareGPT default 1024)")
	f.IntVar(&d.Filter.MinOutput, "min-output-len", 0, "with --dataset: drop entries asking for fewer output tokens (ShareGPT default 4)")
	f.IntVar(&d.Filter.MaxOutput, "max-output-len", 0, "with --dataset: drop entries asking for more output tokens")
	f.Float64Var(&d.Speed, "trace-speed", 1, "with a trace --dataset: replay it this many times as fast (> 0)")
}

// check refuses the data set flags without --dataset, and a speed that
// is no factor.
func (d *DatasetFlags) check(fs *pflag.FlagSet) error {
	for _, name := range datasetOnly {
		if d.File == "" && fs.Changed(name) {
			return fmt.Errorf("--%s selects from a data set: add --dataset FILE", name)
		}
	}
	if !(d.Speed > 0) || math.IsInf(d.Speed, 0) {
		return fmt.Errorf("--trace-speed %v: want a positive factor (2 replays a trace twice as fast)", d.Speed)
	}
	return nil
}

// apply selects the data set (sampled with seed) and makes it the run's
// class (scenario.UseDataset); a trace sets cfg's arrivals and size.
func (d *DatasetFlags) apply(fs *pflag.FlagSet, seed uint64, cfg *load.Config, class *workload.Class) error {
	for _, name := range []string{"prompt-tokens", "shared-prefix-tokens"} {
		if fs.Changed(name) {
			return fmt.Errorf("--%s makes synthetic prompts: --dataset sends the data set's own; drop one of them", name)
		}
	}
	set, err := dataset.Load(fixtures.DatasetFS(), d.File, dataset.Options{NumPrompts: d.NumPrompts, Seed: seed, Filter: d.Filter, Speed: d.Speed})
	if err == nil {
		err = scenario.UseDataset(set, cfg, class, fs.Changed("max-tokens"))
	}
	if err == nil && fs.Changed("trace-speed") && cfg.Arrivals == nil {
		err = errors.New("--trace-speed replays a trace's timestamps, which --concurrency or --rate replace (or the file has none): drop one of them")
	}
	if err != nil {
		return fmt.Errorf("--dataset %s: %w", d.File, err)
	}
	return nil
}

// tooLong says which flags shorten a data set whose longest request does
// not fit the server's context.
func (d *DatasetFlags) tooLong(ce *pipeline.ContextError) error {
	return fmt.Errorf("--dataset %s: its longest request needs %d prompt words + %d output tokens, more than the %d tokens the server accepts for %s (max_model_len on /v1/models): every such request would fail; drop them with --max-prompt-len and --max-output-len",
		d.File, ce.Longest.PromptWords, ce.Longest.MaxTokens, ce.MaxModelLen, ce.Model)
}
