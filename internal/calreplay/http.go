package calreplay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	loadgen "github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/request/workload"
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/vllmsim"
	"github.com/vllmperf/vllmperf/internal/vllmsim/calibration"
	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
	"github.com/vllmperf/vllmperf/internal/vocab/cliarg"
)

// HTTPRow is a row that goes through the HTTP path: a short workload of
// the suite's synthetic prompts (words, as a user's run sends them), sent
// through the real HTTP API of an in-process vllm-sim by the suite's own
// client (packages workload, openai, load, stats) in real time, and set
// beside the same workload as token ids injected into an
// engine.Simulation in simulated time (the other rows' path). The token
// path skips the HTTP API and its tokenizer, so only these rows see a
// prompt the API refuses (issue 23: every Llama request got a 400); the
// comparison shows that the calibrated timing is what the HTTP API serves.
type HTTPRow struct {
	// Model is the model preset served; HTTPRows has one row per preset.
	Model string
	// Setup is the calibration row whose server the row borrows (its GPU,
	// flags and context cap: serveArgs); "" for vllm-sim's defaults.
	Setup string
	// Endpoint is calibration.EndpointChat or EndpointCompletions.
	Endpoint calibration.Endpoint
}

// ID names the row in the table.
func (r HTTPRow) ID() string {
	return "http-" + strings.ToLower(r.Model[strings.LastIndex(r.Model, "/")+1:]) + "-" + string(r.Endpoint)
}

// HTTPRows are the HTTP-path rows, one per model preset, each on the
// server of a calibration row of its model where there is one.
var HTTPRows = []HTTPRow{
	// No calibration row serves Qwen3-0.6B: vllm-sim's defaults (the seed
	// article's RTX 4090), what `vllmperf run` starts without flags.
	{Model: "Qwen/Qwen3-0.6B", Endpoint: calibration.EndpointChat},
	// wmx's L4 (--gpu-memory-utilization 0.6 --max-model-len 8192).
	{Model: "Qwen/Qwen2.5-0.5B-Instruct", Setup: "wmx-l4-qwen2.5-0.5b-256-128-c1", Endpoint: calibration.EndpointCompletions},
	// GPUStack's H100, chat as GPUStack sent.
	{Model: "Qwen/Qwen3-8B", Setup: "gpustack-h100-qwen3-8b-sharegpt-c1", Endpoint: calibration.EndpointChat},
	// GPUStack's H100, chat as GPUStack sent.
	{Model: "Qwen/Qwen3-14B", Setup: "gpustack-h100-qwen3-14b-random-128-in", Endpoint: calibration.EndpointChat},
	// IOG's RTX 4090, completions as IOG sent; the context capped where the
	// KV cache ends.
	{Model: "meta-llama/Llama-3.1-8B-Instruct", Setup: "iog-rtx4090-llama-3-8b-sharegpt-qps1", Endpoint: calibration.EndpointCompletions},
	// vLLM CI's 4 × H200 (an offline row), here behind the API server.
	{Model: "meta-llama/Llama-3.1-70B-Instruct", Setup: "vllm-perf-9515-h200x4-llama-3-70b-latency-32-128-b8", Endpoint: calibration.EndpointChat},
}

// HTTPWorkload is every HTTP row's workload: short, so that the real-time
// path takes a few seconds in all, with prompts of the calibration rows'
// 256 input tokens, output lengths forced (ignore_eos) and two requests at
// a time, so that they share the engine's batch.
var HTTPWorkload = calibration.SimWorkload{
	InputTokens: 256, OutputTokens: 32, LengthsFrom: calibration.LengthsFixed, IgnoreEOS: true,
	Concurrency: 2, RequestRate: math.Inf(1), NumPrompts: 6,
}

// HTTPFloor is the least share of its simulated-time figures the HTTP path
// must serve at the GPU presets' speeds (TestTimingHTTPPath): output
// throughput, and the inverse of mean TPOT, at least HTTPFloor of the
// replay of the same workload in simulated time, unless the host fell
// behind real time (HostPace.Behind), which is reported as the host's.
const HTTPFloor = 0.9

// httpRowTimeout bounds one HTTP row's real-time run.
const httpRowTimeout = 2 * time.Minute

// HTTPLine is one HTTP row's outcome.
type HTTPLine struct {
	Row HTTPRow
	// Args are vllm-sim's arguments both paths ran with; Server names
	// their GPUs and model, as the calibration table does.
	Args   []string
	Server string
	// Tokens is the token path (simulated time), HTTP the HTTP path (real
	// time; its Engine, front-end and queue figures are not measured).
	Tokens, HTTP Result
	// PromptTokens is the usage.prompt_tokens of every HTTP request:
	// HTTPWorkload.InputTokens, one token per word (any other count is an
	// Err).
	PromptTokens int
	// Comparisons set the token path's figures (as Published) beside the
	// HTTP path's (as Simulated), with the calibration's tolerances.
	Comparisons []Comparison
	// Host is how well the host kept real time during the HTTP path: a
	// row outside tolerance while Host.Behind() is the host's miss, not
	// the model's.
	Host HostPace
	// Err says why the row did not run, or which request of the HTTP path
	// failed or counted its prompt wrong.
	Err error
}

// Within reports whether the row ran and every figure of the HTTP path is
// within tolerance of the token path's.
func (l HTTPLine) Within() bool { return Line{Comparisons: l.Comparisons, Err: l.Err}.Within() }

// Faster lists the figures in which the HTTP path beat the token path by
// more than the tolerance. The HTTP path runs in real time, where a busy
// machine only ever slows it (a late step, a late chunk): a faster figure
// means it skips a cost the timing model charges, whatever the machine's
// load.
func (l HTTPLine) Faster() []Comparison {
	var out []Comparison
	for _, c := range l.Comparisons {
		gain := -c.Error() // latencies: lower is faster
		if c.Metric == MetricThroughput {
			gain = c.Error()
		}
		if gain > c.Tolerance {
			out = append(out, c)
		}
	}
	return out
}

// RunHTTP replays every HTTP row, in order, looking their setups up in
// rows (calibration.Load). Both paths run without noise (--sim-jitter 0),
// so that what differs is the path.
func RunHTTP(rows []calibration.Row, seed int64) []HTTPLine {
	byID := map[string]calibration.Row{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	out := make([]HTTPLine, 0, len(HTTPRows))
	for _, hr := range HTTPRows {
		l := replayHTTPRow(hr, byID, seed)
		if l.Err == nil {
			l.Comparisons = compareFigures(l.Tokens, l.HTTP)
		}
		out = append(out, l)
	}
	return out
}

func replayHTTPRow(hr HTTPRow, byID map[string]calibration.Row, seed int64) HTTPLine {
	l := HTTPLine{Row: hr}
	args := cliarg.Model.With(hr.Model)
	if hr.Setup != "" {
		src, ok := byID[hr.Setup]
		if !ok {
			l.Err = fmt.Errorf("setup %s is no calibration row", hr.Setup)
			return l
		}
		if src.Model.Preset != hr.Model {
			l.Err = fmt.Errorf("setup %s serves %s, not %s", hr.Setup, src.Model.Preset, hr.Model)
			return l
		}
		in, _ := src.SimInputs() // Args do not need published lengths
		args = in.Args
	}
	args, _, err := serveArgs(args)
	if err != nil {
		l.Err = err
		return l
	}
	seed ^= int64(idHash(hr.ID()))
	l.Args = slices.Concat(args, cliarg.SimJitter.With("0"), cliarg.SimColdStart.With("0"), cliarg.SimSeed.With(fmt.Sprint(seed)))
	o, err := config.ParseArgs(l.Args)
	if err != nil {
		l.Err = err
		return l
	}
	l.Server = preset(calibration.Row{
		Hardware: calibration.Hardware{GPU: o.Config.GPU, Count: o.Config.TensorParallelSize},
		Model:    calibration.Model{Preset: hr.Model},
	})
	w := HTTPWorkload
	w.Endpoint = hr.Endpoint
	in := calibration.SimInputs{GPU: o.Config.GPU, Model: hr.Model, Args: l.Args, Workload: w}
	l.Tokens = Result{Inputs: in, NumPrompts: w.NumPrompts}
	if err := simulate(o.Config, &l.Tokens, seed); err != nil {
		l.Err = fmt.Errorf("token path: %w", err)
		return l
	}
	l.HTTP = Result{Inputs: in, NumPrompts: w.NumPrompts}
	ctx, cancel := context.WithTimeout(context.Background(), httpRowTimeout)
	defer cancel()
	l.PromptTokens, l.Host, err = sendHTTP(ctx, o, &l.HTTP, uint64(seed))
	if err != nil {
		l.Err = fmt.Errorf("HTTP path: %w", err)
	}
	return l
}

// sendHTTP serves a vllm-sim with options o on a loopback port and sends
// res.Inputs.Workload through its HTTP API with the suite's client,
// filling res with the figures `vllm bench serve` would report (package
// stats). It returns the prompt tokens every request counted (usage) and
// how well the host kept real time meanwhile, or an error naming the first
// request that failed or counted otherwise.
func sendHTTP(ctx context.Context, o config.Options, res *Result, seed uint64) (promptTokens int, host HostPace, err error) {
	srv, err := vllmsim.NewWithOptions(o, io.Discard)
	if err != nil {
		return 0, host, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = srv.Close()
		return 0, host, err
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx, ln) }()
	defer func() {
		stop()
		if serr := <-served; serr != nil && !errors.Is(serr, context.Canceled) {
			err = errors.Join(err, fmt.Errorf("serve: %w", serr))
		}
	}()
	base := "http://" + ln.Addr().String()
	client := openai.New(base)
	defer client.CloseIdleConnections()
	w := res.Inputs.Workload
	endpoint := openai.Chat
	if w.Endpoint == calibration.EndpointCompletions {
		endpoint = openai.Completions
	}
	gen, err := workload.New(workload.Config{Endpoint: endpoint, Model: o.Config.ModelName(), PromptTokens: w.InputTokens,
		MaxTokens: w.OutputTokens, IgnoreEOS: w.IgnoreEOS, Seed: seed})
	if err != nil {
		return 0, host, err
	}
	waited0, _ := cpuWait()
	t0 := time.Now()
	run, err := loadgen.Run(ctx, loadgen.Config{Concurrency: w.Concurrency, Requests: res.NumPrompts}, client, gen.Next)
	host.Wall = time.Since(t0)
	if waited, ok := cpuWait(); ok {
		host.Waited, host.WaitKnown = max(0, waited-waited0), true
	}
	if err != nil {
		return 0, host, err
	}
	if host.Lost, err = scrapeLost(ctx, http.DefaultClient, base); err != nil {
		return 0, host, err
	}
	measured := run.Measured()
	sum, err := stats.Summarize(measured, run.Start, run.End, stats.SLO{})
	if err != nil {
		return 0, host, err
	}
	for _, x := range measured {
		switch {
		case !x.OK():
			return 0, host, fmt.Errorf("request %d of %d failed (%d failed in all): %s", x.Index+1, len(measured), sum.Failed, x.Err.Detail())
		case x.PromptTokens != w.InputTokens:
			return 0, host, fmt.Errorf("request %d: usage.prompt_tokens %d for a prompt of %d words", x.Index+1, x.PromptTokens, w.InputTokens)
		}
	}
	if sum.Completed != res.NumPrompts {
		return 0, host, fmt.Errorf("%d of %d requests completed", sum.Completed, res.NumPrompts)
	}
	res.Completed, res.Duration = sum.Completed, sum.Duration
	res.OutputThroughput, res.TotalThroughput, res.RequestThroughput = sum.OutputThroughput, sum.TotalTokenThroughput, sum.RequestThroughput
	res.TTFT, res.TPOT, res.ITL, res.E2EL = distStats(sum.TTFT), distStats(sum.TPOT), distStats(sum.ITL), distStats(sum.E2EL)
	return w.InputTokens, host, nil
}

// distStats converts a stats.Dist (milliseconds) to Stats.
func distStats(d stats.Dist) Stats {
	p99, _ := d.Pct(99)
	ms := func(v float64) time.Duration { return time.Duration(math.Round(v * float64(time.Millisecond))) }
	return Stats{Mean: ms(d.Mean), Median: ms(d.Median), P99: ms(p99)}
}

// compareFigures sets the token path's mean TTFT, mean TPOT and output
// throughput (as Published) beside the HTTP path's (as Simulated).
func compareFigures(tokens, http Result) []Comparison {
	return []Comparison{
		{Metric: MetricTTFT, Stat: "mean", Published: ms(tokens.TTFT.Mean), Simulated: ms(http.TTFT.Mean), Tolerance: TTFTTolerance},
		{Metric: MetricTPOT, Stat: "mean", Published: ms(tokens.TPOT.Mean), Simulated: ms(http.TPOT.Mean), Tolerance: RateTolerance},
		{Metric: MetricThroughput, Stat: "output", Published: tokens.OutputThroughput, Simulated: http.OutputThroughput, Tolerance: RateTolerance},
	}
}

// HTTPTable renders the HTTP rows as a Markdown table: per row its model,
// server, load and, for each figure, "token path → HTTP path (error)", a
// miss marked ✗.
func HTTPTable(lines []HTTPLine) string {
	var b strings.Builder
	b.WriteString("| row | server | load | TTFT ms | TPOT ms | tok/s (output) | prompt tokens per request | within |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, l := range lines {
		cells := map[Metric]string{}
		for _, c := range l.Comparisons {
			mark := ""
			if !c.Within() {
				mark = " ✗"
			}
			cells[c.Metric] = fmt.Sprintf("%s → %s (%+.0f%%)%s", num(c.Published), num(c.Simulated), 100*c.Error(), mark)
		}
		within := "yes"
		switch {
		case l.Err != nil:
			within = "error: " + l.Err.Error()
		case !l.Within() && l.Host.Behind():
			within = fmt.Sprintf("not counted: host behind real time %.0f%%", 100*l.Host.Share())
		case !l.Within():
			within = "**no**"
		}
		server := l.Server + ", vllm-sim's defaults"
		if l.Row.Setup != "" {
			server = l.Server + ", as " + l.Row.Setup
		}
		prompt := "–"
		if l.Err == nil {
			prompt = fmt.Sprintf("%d → %d", HTTPWorkload.InputTokens, l.PromptTokens)
		}
		w := HTTPWorkload
		fmt.Fprintf(&b, "| %s | %s | %d→%d, conc %d, %d prompts, %s | %s | %s | %s | %s | %s |\n", l.Row.ID(), server,
			w.InputTokens, w.OutputTokens, w.Concurrency, w.NumPrompts, l.Row.Endpoint,
			orDash(cells[MetricTTFT]), orDash(cells[MetricTPOT]), orDash(cells[MetricThroughput]), prompt, within)
	}
	return b.String()
}
