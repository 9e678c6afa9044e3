// Package replay runs the calibration set's published benchmarks against
// the simulated engine in simulated time and compares the figures: the
// workload each row describes (closed loop at a concurrency, Poisson
// arrivals, a rate-inf burst, an offline batch) is sent to an
// engine.Simulation built from the row's flags and preset, measured as
// `vllm bench serve` measures it, and set beside the published figures
// (Compare, Table). `make calibrate` prints the table; docs/calibration.md
// holds it.
package calreplay

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
	"github.com/vllmperf/vllmperf/internal/vllmsim/calibration"
	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
	"github.com/vllmperf/vllmperf/internal/vocab/cliarg"
)

// DefaultPrompts is the number of requests replayed for a row whose source
// does not publish it: `vllm bench serve`'s default --num-prompts.
const DefaultPrompts = 1000

// maxSteps bounds one replay's engine steps (the longest row needs ~150k).
const maxSteps = 5_000_000

// Options change how a row is replayed.
type Options struct {
	// Seed is the simulator's --sim-seed (noise and output tokens) and
	// seeds the workload's prompts and arrivals.
	Seed int64
	// Jitter, when set, replaces the simulator's default --sim-jitter.
	Jitter *float64
	// Costs, when set, replace the costs of the row's GPU preset (a fit's
	// candidate). Check rows refuse them (ErrCheckRow): no fitting run
	// ever replays a check row.
	Costs *presets.Costs
}

// ErrCheckRow is returned by Replay for a check row with candidate costs
// (Options.Costs): the check set is replayed only with the shipped
// presets, as the final check, never while fitting or exploring.
var ErrCheckRow = errors.New("check rows are replayed only with the shipped presets (the final check), never with candidate costs")

// Stats are one latency metric's statistics over a replay, computed as
// `vllm bench serve` does (numpy's mean, median and linear percentile).
type Stats struct {
	Mean, Median, P99 time.Duration
}

// Result is what a replay of one row measured.
type Result struct {
	Row    calibration.Row
	Inputs calibration.SimInputs
	// NumPrompts is the number of requests replayed; PromptsDefaulted is
	// set when the source did not publish it (DefaultPrompts was used).
	NumPrompts       int
	PromptsDefaulted bool
	// Duration is from the first request to the last completion.
	Duration  time.Duration
	Completed int
	// OutputThroughput, TotalThroughput (input + output tokens) and
	// RequestThroughput are per second of Duration.
	OutputThroughput, TotalThroughput, RequestThroughput float64
	// TTFT, TPOT and ITL as a client measures them; E2EL is per request, or
	// for an offline batch the batch's latency.
	TTFT, TPOT, ITL, E2EL Stats
	// Where the mean TTFT went: the front end (API server), the engine's
	// waiting queue and the prefill (from first scheduling to first token).
	FrontendMean, QueueMean, PrefillMean time.Duration
	// Engine is the engine's view: its mean and peak running batch.
	Engine engine.Peaks
	// MaxModelLenCapped is the --max-model-len the replay chose (0: none)
	// because the row's flags leave the model's full context, which the KV
	// cache cannot hold: vLLM refuses to start then and names the largest
	// length that fits, which is what is used (fitMaxModelLen).
	MaxModelLenCapped int
	// LengthsFrom names the row whose mean lengths were borrowed
	// (BorrowedLengths); empty when the row publishes its own.
	LengthsFrom string
}

// BorrowedLengths are the reference rows (their source publishes no token
// lengths) that are replayed all the same, with the mean lengths of a
// runnable row from the same lab, dataset, number of prompts and
// tokenizer: GPUStack's bursts of 1000 ShareGPT chat prompts to Qwen3-8B
// take the means of its burst of 1000 ShareGPT chat prompts to Qwen3-14B
// (217 input, 202 output tokens). `vllm bench serve` draws the same 1000
// prompts (ShareGPT shuffled with seed 0), Qwen3-8B and Qwen3-14B share
// their tokenizer, and the outputs are capped by the same dataset
// completions (the lab's 100-prompt runs of Qwen3-8B, the first 100 of
// those draws, average 233 and 221). These bursts are the only published
// ones of hundreds of prompts at once, where the front end's queueing
// shows. The A100 row of the same table is left out: its mean TTFT of
// 3.4 s cannot be met with these lengths on any A100 (first-come-first-
// served prefill of 1000 × 217 tokens in under 2 × 3.4 s needs 443
// TFLOP/s, above the A100's 312 peak), so its lengths were not these.
var BorrowedLengths = map[string]string{
	"gpustack-h100-qwen3-8b-sharegpt-1000":        "gpustack-h100-qwen3-14b-sharegpt-1000",
	"gpustack-h100-qwen3-8b-sharegpt-1000-kv-fp8": "gpustack-h100-qwen3-14b-sharegpt-1000",
	"gpustack-rtx4090-qwen3-8b-sharegpt-1000":     "gpustack-h100-qwen3-14b-sharegpt-1000",
}

// Replayable returns the rows a calibration replays: the runnable rows and
// the BorrowedLengths rows, each of the latter a copy with the lender's
// mean lengths (scaled to its own number of prompts) and LengthsFrom set.
func Replayable(rows []calibration.Row) []Replayed {
	byID := map[string]calibration.Row{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	var out []Replayed
	for _, r := range rows {
		if r.Runnable() {
			out = append(out, Replayed{Row: r})
			continue
		}
		lender, ok := byID[BorrowedLengths[r.ID]]
		if !ok {
			continue
		}
		w, lw := &r.Workload, lender.Workload
		n := float64(lender.Measured.Completed)
		w.LengthsPublished = true
		w.TotalInputTokens = int(math.Round(float64(lw.TotalInputTokens) / n * float64(w.NumPrompts)))
		w.TotalOutputTokens = int(math.Round(float64(lw.TotalOutputTokens) / n * float64(w.NumPrompts)))
		out = append(out, Replayed{Row: r, LengthsFrom: lender.ID})
	}
	return out
}

// Replayed is a row to replay; LengthsFrom names the row whose lengths it
// borrows (BorrowedLengths), empty for a runnable row.
type Replayed struct {
	Row         calibration.Row
	LengthsFrom string
}

// errNoReplay wraps the reasons a row cannot be replayed.
var errNoReplay = errors.New("cannot replay")

// Replay runs row's workload against the simulator in simulated time.
func Replay(row calibration.Row, opts Options) (Result, error) {
	if row.Split != calibration.Fit && opts.Costs != nil {
		return Result{Row: row}, fmt.Errorf("row %s: %w", row.ID, ErrCheckRow)
	}
	in, err := row.SimInputs()
	if err != nil {
		return Result{}, err
	}
	w := in.Workload
	res := Result{Row: row, Inputs: in, NumPrompts: w.NumPrompts}
	if res.NumPrompts == 0 {
		res.NumPrompts, res.PromptsDefaulted = DefaultPrompts, true
	}
	cfg, capped, err := simConfig(in, opts)
	if err != nil {
		return res, fmt.Errorf("row %s: %w", row.ID, err)
	}
	res.MaxModelLenCapped = capped
	if err := simulate(cfg, &res, opts.Seed^int64(idHash(row.ID))); err != nil {
		return res, fmt.Errorf("row %s: %w", row.ID, err)
	}
	return res, nil
}

// simulate sends res.Inputs.Workload's res.NumPrompts requests to an
// engine.Simulation of cfg in simulated time, the workload seeded by seed,
// and fills res with what the client and the engine measured.
func simulate(cfg engine.Config, res *Result, seed int64) error {
	w := res.Inputs.Workload
	reg := prometheus.NewRegistry()
	sm, err := engine.NewSimulation(cfg, reg)
	if err != nil {
		return err
	}
	c := newClient(sm, w, res.NumPrompts, seed, sm.Info().VocabSize)
	c.start()
	if err := sm.Run(maxSteps); err != nil {
		return err
	}
	if err := c.err(); err != nil {
		return err
	}
	c.summarize(res, w.Endpoint == calibration.EndpointOffline)
	res.Engine = sm.Peaks()
	res.FrontendMean, res.QueueMean, res.PrefillMean = ttftParts(reg, res.TTFT.Mean)
	return nil
}

// simConfig is the engine configuration vllm-sim would run with the row's
// flags (serveArgs): warm (no cold start, as benchmarks are measured after
// warm-up), without an API server for offline rows.
func simConfig(in calibration.SimInputs, opts Options) (cfg engine.Config, capped int, err error) {
	args, capped, err := serveArgs(in.Args)
	if err != nil {
		return cfg, 0, err
	}
	o, err := config.ParseArgs(args)
	if err != nil {
		return cfg, 0, err
	}
	cfg = o.Config
	cfg.ColdStart = 0
	cfg.Seed = opts.Seed
	if opts.Jitter != nil {
		cfg.Jitter = *opts.Jitter
	}
	if opts.Costs != nil {
		g, _ := presets.LookupGPU(in.GPU)
		g = g.WithCosts(*opts.Costs)
		cfg.GPUSpec = &g
	}
	cfg.Offline = in.Workload.Endpoint == calibration.EndpointOffline
	return cfg, capped, nil
}

// serveArgs are vllm-sim's arguments for a row's flags (Row.SimInputs):
// args as they are, or, when they leave the model's full context and the
// KV cache cannot hold it, args with the largest --max-model-len that fits
// (returned as capped). vLLM refuses to start then and names that length;
// the sources ran these models on these GPUs, so they lowered it (the
// length only bounds which requests are admitted).
func serveArgs(args []string) (out []string, capped int, err error) {
	_, err = config.ParseArgs(args)
	if err == nil || slices.Contains(args, cliarg.MaxModelLen.Arg()) {
		return args, 0, err
	}
	probe, perr := config.ParseArgs(slices.Concat(args, cliarg.MaxModelLen.With("1")))
	if perr != nil {
		return nil, 0, err // the first error says more
	}
	sm, perr := engine.NewSimulation(probe.Config, nil)
	if perr != nil {
		return nil, 0, err
	}
	capped = sm.Info().KVCacheTokens
	out = slices.Concat(args, cliarg.MaxModelLen.With(fmt.Sprint(capped)))
	if _, err := config.ParseArgs(out); err != nil {
		return nil, 0, err
	}
	return out, capped, nil
}

// request is one request's client-side record.
type request struct {
	sent, first, last time.Duration
	tokens            int
	itls              []time.Duration
	done              bool
	err               error
}

// client is the benchmark client: it sends the rows' requests on the
// schedule `vllm bench serve` would (all at once, Poisson arrivals, a
// concurrency cap) and records what it sees.
type client struct {
	sm       *engine.Simulation
	w        calibration.SimWorkload
	reqs     []request
	prompts  [][]int32
	outputs  []int           // each request's max_tokens (its output length: ignore_eos)
	arrivals []time.Duration // when each request may be sent
	next     int             // the next request to send
	inFlight int
	failed   error
}

func newClient(sm *engine.Simulation, w calibration.SimWorkload, n int, seed int64, vocab int) *client {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6a09e667f3bcc908))
	c := &client{sm: sm, w: w, reqs: make([]request, n), prompts: make([][]int32, n), arrivals: make([]time.Duration, n),
		outputs: w.OutputLengths(n, uint64(seed))}
	var t float64
	for i := range n {
		p := make([]int32, w.InputTokens)
		for j := range p {
			p[j] = int32(rng.IntN(vocab))
		}
		c.prompts[i] = p
		if !math.IsInf(w.RequestRate, 1) && w.RequestRate > 0 {
			t += rng.ExpFloat64() / w.RequestRate // Poisson arrivals (burstiness 1)
			c.arrivals[i] = time.Duration(t * float64(time.Second))
		}
	}
	return c
}

// start schedules every request's arrival; a request arriving while the
// concurrency cap is reached waits for a slot (vllm bench serve's
// semaphore), and its latencies start when it is sent.
func (c *client) start() {
	for i := range c.reqs {
		c.sm.At(c.arrivals[i], c.sendWaiting)
	}
}

// sendWaiting sends the requests that have arrived while slots are free.
func (c *client) sendWaiting() {
	now := c.sm.Now()
	for c.next < len(c.reqs) && c.arrivals[c.next] <= now && (c.w.Concurrency == 0 || c.inFlight < c.w.Concurrency) {
		i := c.next
		c.next++
		c.inFlight++
		c.reqs[i].sent = now
		req := engine.Request{PromptTokens: c.prompts[i], MaxTokens: c.outputs[i], IgnoreEOS: true,
			Chat: c.w.Endpoint == calibration.EndpointChat}
		if err := c.sm.Submit(req, func(out engine.Output) { c.receive(i, out) }); err != nil {
			c.failed = err
			return
		}
	}
}

// receive records one output of request i.
func (c *client) receive(i int, out engine.Output) {
	r := &c.reqs[i]
	now := c.sm.Now()
	if len(out.Tokens) > 0 {
		if r.tokens == 0 {
			r.first = now
		} else {
			r.itls = append(r.itls, now-r.last)
		}
		r.tokens += len(out.Tokens)
		r.last = now
	}
	if out.Err != nil {
		r.err = out.Err
	}
	if out.Finished {
		r.done = true
		c.inFlight--
		c.sendWaiting()
	}
}

// err reports a request that failed or never finished.
func (c *client) err() error {
	if c.failed != nil {
		return c.failed
	}
	for i, r := range c.reqs {
		if r.err != nil {
			return fmt.Errorf("request %d failed: %w", i, r.err)
		}
		if !r.done {
			return fmt.Errorf("%w: request %d never finished", errNoReplay, i)
		}
	}
	return nil
}

// summarize computes the benchmark's figures from the requests.
func (c *client) summarize(res *Result, offline bool) {
	var ttft, tpot, itl, e2el []float64
	var end time.Duration
	outTokens, inTokens := 0, 0
	for i, r := range c.reqs {
		inTokens += len(c.prompts[i])
		ttft = append(ttft, float64(r.first-r.sent))
		e2el = append(e2el, float64(r.last-r.sent))
		if r.tokens > 1 {
			tpot = append(tpot, float64(r.last-r.first)/float64(r.tokens-1))
		}
		for _, d := range r.itls {
			itl = append(itl, float64(d))
		}
		end = max(end, r.last)
		outTokens += r.tokens
	}
	res.Duration, res.Completed = end, len(c.reqs)
	sec := end.Seconds()
	res.OutputThroughput, res.RequestThroughput = float64(outTokens)/sec, float64(len(c.reqs))/sec
	res.TotalThroughput = float64(outTokens+inTokens) / sec
	res.TTFT, res.TPOT, res.ITL, res.E2EL = statsOf(ttft), statsOf(tpot), statsOf(itl), statsOf(e2el)
	if offline { // the latency benchmark times the whole batch
		res.E2EL = Stats{Mean: end, Median: end, P99: end}
	}
}

func statsOf(v []float64) Stats {
	if len(v) == 0 {
		return Stats{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	d := func(x float64) time.Duration { return time.Duration(math.Round(x)) }
	return Stats{Mean: d(stats.Mean(s)), Median: d(stats.Median(s)), P99: d(stats.Percentile(s, 99))}
}

// ttftParts splits the mean TTFT with the engine's histograms: the mean
// queue time (request_queue_time_seconds: waiting queue only) and prefill
// time; the rest is the front end.
func ttftParts(g prometheus.Gatherer, ttft time.Duration) (frontend, queue, prefill time.Duration) {
	queue = histMean(g, serverfamily.VLLM.Metrics.Prefix+scrape.RequestQueueTimeSeconds)
	prefill = histMean(g, serverfamily.VLLM.Metrics.Prefix+scrape.RequestPrefillTimeSeconds)
	return max(0, ttft-queue-prefill), queue, prefill
}

// histMean is a histogram's sum ÷ count (0 when absent or empty).
func histMean(g prometheus.Gatherer, name string) time.Duration {
	mfs, err := g.Gather()
	if err != nil {
		return 0
	}
	for _, mf := range mfs {
		if mf.GetName() != name || mf.GetType() != dto.MetricType_HISTOGRAM {
			continue
		}
		var sum float64
		var n uint64
		for _, m := range mf.GetMetric() {
			sum += m.GetHistogram().GetSampleSum()
			n += m.GetHistogram().GetSampleCount()
		}
		if n == 0 {
			return 0
		}
		return time.Duration(sum / float64(n) * float64(time.Second))
	}
	return 0
}

// idHash seeds a row's workload from its id.
func idHash(id string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(id))
	return h.Sum32()
}
