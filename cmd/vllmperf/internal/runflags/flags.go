package runflags

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/cmd/vllmperf/internal/cliflags"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"

	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/request/workload"
	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/target/torchprof"
)

// Flags are the flags of one run against one server (vllmperf run): each
// group is bound and checked by the package it configures, and Parse
// turns them into what server.Run and Run take.
type Flags struct {
	Server          cliflags.ServerFlags
	Load            cliflags.LoadFlags
	Request         cliflags.RequestFlags
	Client          cliflags.ClientFlags
	Data            DatasetFlags
	Goodput         []string
	SamplerInterval time.Duration
	Quiet           bool
	TorchProfile    TorchProfileFlags
	VLLM            VLLMFlags // vllm bench serve's names (vllmnames.go)
	JSON            string    // --json, bound by the command
	Results         string
	LoRA            LoRAFlags
	MM              MMFlags
}

// Register defines the flags on fs, with the CLI's defaults.
func (o *Flags) Register(f *pflag.FlagSet) {
	cliflags.Server(f, &o.Server)
	cliflags.Load(f, &o.Load)
	cliflags.LoadShape(f, &o.Load.Shape)
	cliflags.Request(f, &o.Request)
	cliflags.Client(f, &o.Client)
	o.Data.Register(f)
	o.TorchProfile.Register(f)
	o.LoRA.Register(f)
	o.MM.Register(f)
	f.StringSliceVar(&o.Goodput, "goodput", nil, "SLOs for goodput, vLLM style: ttft:MS tpot:MS e2el:MS (space- or comma-separated)")
	f.BoolVar(&o.Quiet, "quiet", false, "no progress bar on stderr")
	f.DurationVar(&o.SamplerInterval, "sample-interval", scenario.DefaultSamplerInterval, "how often /metrics is sampled during the load (running, waiting, KV usage, tokens/s)")
	f.StringVar(&o.Results, "results", "", "also write a results folder here, as the suite writes one (summary.json, samples.jsonl, bench.txt, report.html): for vllmperf report, gate and history add")
	o.registerVLLM(f)
}

// Input is the run the flags describe, checked.
type Input struct {
	Point   scenario.Point  // one class (random-word prompts, or --dataset's) under the load shape
	Profile profile.Profile // the server's profile (a deployment's for a running one)
	Servers []server.Option // for server.Run: the environment's, then the flags'
	Client  openai.Settings
	Goodput stats.SLO
	// TorchProfile is --torch-profile's capture (nil when off).
	TorchProfile *torchprof.Settings
	// ResultFlag and ResultPath are the result JSON's flag (--json or
	// --save-result) and file ("" for none).
	ResultFlag, ResultPath string
}

// Parse checks every flag (fs says which were given); each error names
// the flag and the fix. Notes (a --target cut back to its base URL) go to
// stderr, and so does the server's log unless Quiet.
func (o *Flags) Parse(fs *pflag.FlagSet, stderr io.Writer) (*Input, error) {
	if err := o.applyVLLM(fs); err != nil {
		return nil, err
	}
	o.Load.Dataset = o.Data.File != ""
	cfg, err := o.Load.Parse(fs.Changed)
	if err != nil {
		return nil, err
	}
	class, err := o.Request.Class("run")
	if err != nil {
		return nil, err
	}
	if err := o.Data.check(fs); err != nil {
		return nil, err
	}
	if err := o.LoRA.check(); err != nil {
		return nil, err
	}
	if err := o.MM.apply(fs, o.VLLM.DatasetName, o.Client.Endpoint, &class); err != nil {
		return nil, err
	}
	if o.Data.File != "" {
		if err := o.Data.apply(fs, o.Load.Seed, &cfg, &class); err != nil {
			return nil, err
		}
	}
	if o.SamplerInterval < scrape.MinInterval {
		return nil, fmt.Errorf("--sample-interval %s: want a duration of at least %s, such as 2s", o.SamplerInterval, scrape.MinInterval)
	}
	in := &Input{Point: scenario.Point{Key: "run", Classes: []workload.Class{class}, Load: cfg, SamplerInterval: o.SamplerInterval}}
	if in.Goodput, err = stats.ParseSLO(o.Goodput); err != nil {
		return nil, fmt.Errorf("--goodput %w", err)
	}
	if in.Client, err = o.Client.Settings(); err != nil {
		return nil, err
	}
	if in.Profile, in.Servers, err = o.Server.Options(fs.Changed, in.Client.APIKey, stderr, o.Quiet); err != nil {
		return in, err
	}
	var traceOpts []server.Option
	if in.TorchProfile, traceOpts, err = o.TorchProfile.settings(fs, in.Profile.Deployment); err != nil {
		return in, err
	}
	in.Servers = append(in.Servers, traceOpts...)
	in.ResultFlag, in.ResultPath, err = o.resultFile(in, time.Now())
	return in, err
}

// Options are Run's options for in against srv, with progress called
// after each request; an error when no model is known.
func (o *Flags) Options(in *Input, srv server.Server, progress func(done, total int)) ([]pipeline.Option, error) {
	model := o.Server.Model
	if model == "" {
		model = srv.Model()
	}
	if model == "" {
		return nil, exitstatus.Usagef("no model to request: pass --model (the server's served model name)")
	}
	opts := []pipeline.Option{
		pipeline.WithModel(model), pipeline.WithAPIKey(in.Client.APIKey), pipeline.WithEndpoint(in.Client.Endpoint), pipeline.WithSeed(o.Load.Seed),
		pipeline.WithGoodput(in.Goodput), pipeline.WithTimeouts(o.Client.RequestTimeout, o.Client.IdleTimeout),
		pipeline.WithMaxEventSize(in.Client.MaxEventSize), pipeline.WithProgress(progress), pipeline.WithPercentiles(o.VLLM.Percentiles),
	}
	if in.TorchProfile != nil {
		opts = append(opts, pipeline.WithTorchProfile(*in.TorchProfile))
	}
	if o.Load.Shape.NoOverloadStop {
		opts = append(opts, pipeline.WithoutOverloadStop())
	}
	return append(opts, o.LoRA.options()...), nil
}

// Explain turns server.Run's and Run's errors into what the user can act
// on: the flags that make a request too long for the server's context
// and wrong settings (usage errors, package exitstatus), a refused key
// with where it came from, a server still starting.
func (o *Flags) Explain(err error) error {
	var ce *pipeline.ContextError
	var ae *pipeline.AdapterError
	switch {
	case errors.As(err, &ae):
		return exitstatus.Usage(err)
	case errors.As(err, &ce) && o.Data.File != "":
		return exitstatus.Usage(o.Data.tooLong(ce))
	case errors.As(err, &ce):
		return exitstatus.Usage(o.Request.TooLong(ce.MaxModelLen, ce.Model))
	case errors.Is(err, server.ErrSettings):
		return exitstatus.Usage(err)
	case errors.Is(err, server.ErrKeyRejected), errors.Is(err, openai.ErrKeyRejected):
		return errors.Join(err, o.KeyError())
	}
	return o.Server.StartError(err)
}
