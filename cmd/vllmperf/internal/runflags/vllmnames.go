package runflags

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/request/workload"
)

// vLLM bench serve's flag names on `vllmperf run`, with vLLM's meaning
// (vllm/benchmarks/serve.py and datasets.py, vllm-project/vllm at
// 009e6d4a1cd6ba3fb2a9fc00f4ec06f5297232a1). A name whose meaning is one
// of vllmperf's own flags is bound to the same variable, so that the two
// spellings cannot disagree; giving both is refused.

// VLLMFlags are the vLLM names that are not a second spelling of one of
// vllmperf's flags.
type VLLMFlags struct {
	DatasetName    string
	RangeRatio     float64
	SaveResult     bool
	ResultDir      string
	ResultFilename string
	// PercentileMetrics and MetricPercentiles are vLLM's percentile
	// flags as given; Percentiles the latter parsed.
	PercentileMetrics, MetricPercentiles string
	Percentiles                          []float64
}

// percentileMetrics are the names vLLM's --percentile-metrics takes.
var percentileMetrics = []string{"ttft", "tpot", "itl", "e2el", "client_queue_time", "e2el_including_client_queue"}

// vllmSpellings pairs each vLLM name bound to a vllmperf flag's variable
// with that flag: the two may not both be given.
var vllmSpellings = [][2]string{
	{"base-url", "target"},
	{"request-rate", "rate"},
	{"random-input-len", "prompt-tokens"},
	{"random-output-len", "max-tokens"},
}

// VLLMDataset is a value of --dataset-name: what it makes vllmperf send.
type VLLMDataset struct {
	// Help says it in a few words, for --help.
	Help string
	// Apply sets the data set flags for it (File is --dataset, empty
	// for synthetic prompts); an error says which flag is missing or in
	// the way.
	Apply func(d *DatasetFlags) error
}

// VLLMDatasets are the values of --dataset-name vllmperf sends; a data set
// added here is accepted, listed in --help and in the error for an
// unknown name.
var VLLMDatasets = map[string]VLLMDataset{
	"random": {Help: "synthetic prompts of --random-input-len tokens asking for --random-output-len tokens (vLLM's default data set)",
		Apply: synthetic("random")},
	"random-mm": {Help: "synthetic prompts with images (chat only): --random-mm-base-items-per-request images a request, sized by --random-mm-bucket-config",
		Apply: synthetic("random-mm")},
	"sharegpt": {Help: "ShareGPT conversations: --dataset FILE, else the built-in sharegpt.json",
		Apply: func(d *DatasetFlags) error {
			if d.File == "" {
				d.File = "sharegpt.json"
			}
			return nil
		}},
	"custom": {Help: "a JSONL of {prompt|messages, output_len}: --dataset FILE",
		Apply: func(d *DatasetFlags) error {
			if d.File == "" {
				return fmt.Errorf("--dataset-name custom reads a JSONL file: add --dataset FILE")
			}
			return nil
		}},
}

// synthetic is the Apply of a data set vllmperf makes itself: no
// --dataset file beside it.
func synthetic(name string) func(d *DatasetFlags) error {
	return func(d *DatasetFlags) error {
		if d.File != "" {
			return fmt.Errorf("--dataset-name %s makes synthetic prompts, --dataset %s sends a file's: drop one of them", name, d.File)
		}
		return nil
	}
}

// datasetNames lists VLLMDatasets' names, sorted.
func datasetNames() []string {
	names := make([]string, 0, len(VLLMDatasets))
	for n := range VLLMDatasets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// registerVLLM defines vLLM bench serve's names on f; o's flags must be
// registered first (the names bound to their variables keep their
// defaults).
func (o *Flags) registerVLLM(f *pflag.FlagSet) {
	v := &o.VLLM
	f.StringVar(&o.Server.Target, "base-url", "", "vLLM's name for --target: the server's base URL")
	f.StringVar(&o.Load.RateFlag, "request-rate", "", "vLLM's name for --rate; as in vLLM, --max-concurrency N alone sends at rate inf capped at N")
	f.IntVar(&o.Request.PromptTokens, "random-input-len", workload.DefaultPromptTokens, "vLLM's name for --prompt-tokens (vLLM's default too)")
	f.IntVar(&o.Request.MaxTokens, "random-output-len", workload.DefaultMaxTokens, "vLLM's name for --max-tokens (vLLM's default too); sent with ignore_eos, as vLLM's --ignore-eos does")
	f.Float64Var(&v.RangeRatio, "random-range-ratio", 0, "vLLM's spread of random lengths: only 0 (vLLM's default: every request the same length); for a spread use --dataset")
	f.StringVar(&v.DatasetName, "dataset-name", "", "vLLM's data set name: "+strings.Join(datasetNames(), ", ")+" (default random, as vLLM's)")
	f.BoolVar(&v.SaveResult, "save-result", false, "as vLLM: write the --save-result JSON (--json's) to --result-dir/--result-filename")
	f.StringVar(&v.ResultDir, "result-dir", "", "with --save-result: the folder (default the current one)")
	f.StringVar(&v.PercentileMetrics, "percentile-metrics", "", "vLLM's choice of metrics with percentiles ("+strings.Join(percentileMetrics, ", ")+"): checked, but vllmperf writes every metric's percentiles, a superset of vLLM's keys")
	f.StringVar(&v.MetricPercentiles, "metric-percentiles", "", "vLLM's percentiles, comma-separated (e.g. 25,50,75): written besides vllmperf's own p50, p90, p95, p99 and p99.9 (vLLM's default 99 among them)")
	f.StringVar(&v.ResultFilename, "result-filename", "", "with --save-result: the file name (default vLLM's: {backend}-{rate}qps[-concurrency{N}]-{model}-{YYYYmmdd-HHMMSS}.json)")
}

// applyVLLM checks the vLLM names and turns them into vllmperf's flags:
// --dataset-name, --num-prompts without a data set (--requests), and
// --max-concurrency alone (--rate inf, vLLM's default --request-rate).
func (o *Flags) applyVLLM(fs *pflag.FlagSet) error {
	for _, pair := range vllmSpellings {
		if fs.Changed(pair[0]) && fs.Changed(pair[1]) {
			return fmt.Errorf("--%s is vLLM's name for --%s: give one of them", pair[0], pair[1])
		}
	}
	v := &o.VLLM
	if v.RangeRatio != 0 {
		return fmt.Errorf("--random-range-ratio %v: vllmperf sends every synthetic request at the same length (vLLM's default 0); for a spread of lengths send a data set (--dataset)", v.RangeRatio)
	}
	if !v.SaveResult && (fs.Changed("result-dir") || fs.Changed("result-filename")) {
		return fmt.Errorf("--result-dir and --result-filename name the file of --save-result: add --save-result")
	}
	if v.SaveResult && fs.Changed("json") {
		return fmt.Errorf("--save-result and --json both write the result JSON: give one of them")
	}
	if err := o.applyDatasetName(fs); err != nil {
		return err
	}
	if err := v.parsePercentiles(); err != nil {
		return err
	}
	if o.Data.File == "" && fs.Changed("num-prompts") {
		if fs.Changed("requests") {
			return fmt.Errorf("--num-prompts is vLLM's name for --requests without a data set: give one of them")
		}
		o.Load.Requests = o.Data.NumPrompts
	}
	if fs.Changed("max-concurrency") && o.Load.RateFlag == "" && !fs.Changed("concurrency") && o.Data.File == "" && o.Load.Shape.RampStrategy == "" {
		o.Load.RateFlag = "inf" // vLLM's default --request-rate
	}
	return nil
}

// applyDatasetName applies --dataset-name; random-prompt flags with a
// data set are refused.
func (o *Flags) applyDatasetName(fs *pflag.FlagSet) error {
	if name := o.VLLM.DatasetName; name != "" {
		ds, ok := VLLMDatasets[name]
		if !ok {
			return fmt.Errorf("--dataset-name %q: vllmperf sends %s; for another data set, convert it to a JSONL of {prompt|messages, output_len} and pass --dataset FILE", name, strings.Join(datasetNames(), ", "))
		}
		if err := ds.Apply(&o.Data); err != nil {
			return err
		}
	}
	for _, name := range []string{"random-input-len", "random-output-len"} {
		if o.Data.File != "" && fs.Changed(name) {
			return fmt.Errorf("--%s makes synthetic prompts: --dataset sends the data set's own; drop one of them", name)
		}
	}
	return nil
}

// resultFile is the result JSON's flag and path: --json's, or
// --save-result's, named as vLLM names it from the endpoint, the rate,
// the cap and the model at now. The model must be known before the run
// (--model, or the profile's): vLLM asks the server, vllmperf opens its
// output files before any request.
func (o *Flags) resultFile(in *Input, now time.Time) (flag, path string, err error) {
	v := &o.VLLM
	if !v.SaveResult {
		return "--json", o.JSON, nil
	}
	if v.ResultDir != "" { // vLLM makes it too
		if err := os.MkdirAll(v.ResultDir, 0o755); err != nil {
			return "", "", fmt.Errorf("--result-dir: %w", err)
		}
	}
	if v.ResultFilename != "" {
		return "--save-result", filepath.Join(v.ResultDir, v.ResultFilename), nil
	}
	model := o.Server.Model
	if model == "" {
		model = in.Profile.Model
	}
	if model == "" {
		return "", "", fmt.Errorf("--save-result names its file after the model: add --model, or name the file with --result-filename")
	}
	label := "openai" // vLLM's --backend for /v1/completions
	if in.Client.Endpoint == openai.Chat {
		label = "openai-chat"
	}
	cfg := in.Point.Load
	rate := "inf"
	if cfg.Rate > 0 && !math.IsInf(cfg.Rate, 1) {
		rate = strconv.FormatFloat(cfg.Rate, 'f', -1, 64)
		if !strings.Contains(rate, ".") {
			rate += ".0" // as Python prints a float
		}
	}
	capStr := ""
	if c := max(cfg.MaxConcurrency, cfg.Concurrency); c > 0 {
		capStr = fmt.Sprintf("-concurrency%d", c)
	}
	name := fmt.Sprintf("%s-%sqps%s-%s-%s.json", label, rate, capStr, model[strings.LastIndex(model, "/")+1:], now.Format("20060102-150405"))
	return "--save-result", filepath.Join(v.ResultDir, name), nil
}

// parsePercentiles checks --percentile-metrics' names and parses
// --metric-percentiles.
func (v *VLLMFlags) parsePercentiles() error {
	for _, name := range splitList(v.PercentileMetrics) {
		if !slices.Contains(percentileMetrics, name) {
			return fmt.Errorf("--percentile-metrics %q: %q is none of vLLM's metrics: %s", v.PercentileMetrics, name, strings.Join(percentileMetrics, ", "))
		}
	}
	v.Percentiles = nil
	for _, word := range splitList(v.MetricPercentiles) {
		p, err := strconv.ParseFloat(word, 64)
		if err != nil || !(p > 0 && p < 100) {
			return fmt.Errorf("--metric-percentiles %q: %q is no percentile: want numbers between 0 and 100, comma-separated (25,50,99.9)", v.MetricPercentiles, word)
		}
		v.Percentiles = append(v.Percentiles, p)
	}
	return nil
}

// splitList splits a comma-separated flag value, without empty items.
func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
