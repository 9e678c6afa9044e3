// Package result holds what one run of a scenario point produced
// (Result, and the Lengths, Reasoning and Windows that hang off it) and
// the views of it every reader shares: the bench units (Metrics), vLLM's
// text summary and --save-result keys (WriteText, ReportMeta, JSONExtras)
// and the steady-state and ramp windows.
//
// The run pipeline (package pipeline) fills a Result in; the checks
// (package check), the results folder's converter (package record), the
// capacity search and the suite read it. The package imports neither the
// pipeline, the server starter nor a container runtime, so a reader of a
// run does not pull them in (internal/results/layering_test.go holds it).
package result

import (
	"time"

	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/target/torchprof"
)

// Result is what one run of a point produced.
type Result struct {
	// Point is the point that ran; Model the model requested through
	// Endpoint.
	Point    scenario.Point
	Model    string
	Endpoint openai.Endpoint
	// Load is the load generator's result: every sample, warm-up
	// included, in index order, and the measured phase's bounds.
	Load *load.Result
	// Summary covers the measured requests; Classes has one per class
	// when the point mixes several (nil otherwise).
	Summary *stats.Summary
	Classes map[string]*stats.Summary
	// ClassNames lists the point's classes in order.
	ClassNames []string
	// Adapters has one summary per LoRA adapter (WithLoRAModules; nil
	// without), AdapterNames the adapters in the order given.
	Adapters     map[string]*stats.Summary
	AdapterNames []string
	// AdaptersRan are the adapters vllm:lora_requests_info showed running
	// during the load (package pipeline checks them), sorted.
	AdaptersRan []string
	// Reasoning splits thinking from answers; nil when no
	// request streamed thinking.
	Reasoning *Reasoning
	// Before and After are the /metrics snapshots around the run, Delta
	// their difference, Series the sampler's time series during the load.
	Before, After *scrape.Snapshot
	Delta         *scrape.Delta
	Series        *scrape.TimeSeries
	// ScrapeErr is why Before, After or Delta is missing (nil when they
	// are all there).
	ScrapeErr error
	// Drained reports whether running and waiting reached 0 after the
	// load, and DrainWait how long that took.
	Drained   bool
	DrainWait time.Duration
	// ServerDown is set when requests failed and the server no longer
	// serves after the load (server.Probe: it exited, or /health no longer
	// answers 200); it carries the server's last log lines. nil otherwise.
	ServerDown error
	// Lengths are the prompts' lengths in tokens on the served model.
	Lengths *Lengths
	// Warnings are problems that did not stop the run.
	Warnings []error
	// TorchProfile is the profiler window's capture (WithTorchProfile);
	// nil when none was asked for.
	TorchProfile *torchprof.Capture
}

// Samples returns every sample, warm-up included.
func (r *Result) Samples() []sample.Sample { return r.Load.Samples }
