package calibration

import (
	"errors"
	"fmt"
	"math"
)

// ErrLengthsUnpublished is returned by SimInputs for a row whose source
// publishes no token lengths: it cannot be replayed.
var ErrLengthsUnpublished = errors.New("token lengths not published: the row is a reference figure and cannot be replayed")

// LengthSource says where a replayed workload's token lengths come from.
type LengthSource string

// The length sources.
const (
	// LengthsFixed: the source's fixed per-request lengths.
	LengthsFixed LengthSource = "fixed"
	// LengthsMeanOfTotals: the published totals divided by the number of
	// requests, rounded to whole tokens (every request gets the mean).
	LengthsMeanOfTotals LengthSource = "mean of published totals"
	// LengthsOutputFromThroughput: the fixed input length, and as output the
	// mean the published throughputs imply (output tok/s ÷ req/s, or from
	// output and total tok/s), where requests stopped at EOS before the
	// requested output length (no --ignore-eos).
	LengthsOutputFromThroughput LengthSource = "fixed input; mean output implied by the published throughputs"
)

// eosShortfall is how far below the requested output length the implied
// mean must be for SimInputs to replay the implied mean instead: 2 %.
const eosShortfall = 0.98

// SimInputs are what a replay of a row against the simulator needs.
type SimInputs struct {
	// GPU is the simulator's GPU preset (vllm-sim --sim-gpu).
	GPU string
	// Model is the simulator's model preset (vllm-sim --model).
	Model string
	// Args are vllm-sim's command-line arguments: --model, the published
	// flags the simulator models, in published order, and --sim-gpu.
	Args []string
	// Unmodelled are the published flags left out of Args because vllm-sim
	// does not model them (e.g. --num-scheduler-steps, --enforce-eager).
	Unmodelled []Flag
	// Workload is the load to replay.
	Workload SimWorkload
}

// SimWorkload is the load a replay sends.
type SimWorkload struct {
	// InputTokens and OutputTokens are every request's prompt and output
	// lengths.
	InputTokens, OutputTokens int
	// LengthsFrom says how the lengths were obtained.
	LengthsFrom LengthSource
	// IgnoreEOS forces every request to OutputTokens.
	IgnoreEOS bool
	// Concurrency caps requests in flight; 0 = no cap.
	Concurrency int
	// RequestRate is requests per second; +Inf sends all at once.
	RequestRate float64
	// NumPrompts is the number of requests; 0 = not published, and the
	// replay chooses enough for a steady state (and says so).
	NumPrompts int
	// Endpoint is the API the source used; EndpointOffline means no HTTP
	// front end was involved (the figures exclude API-server costs).
	Endpoint Endpoint
	// OutputsVary is set where the published requests' output lengths
	// differ (ShareGPT completions, or requests stopping at EOS): OutputLengths
	// then spreads them around the published mean (MeanOutputTokens), up to
	// OutputCap (0: no cap). Otherwise every request gets OutputTokens.
	OutputsVary      bool
	MeanOutputTokens float64
	OutputCap        int
}

// SimInputs maps the row to the simulator's inputs. It returns
// ErrLengthsUnpublished (wrapped, naming the row) for a row that is not
// Runnable.
func (r Row) SimInputs() (SimInputs, error) {
	in := SimInputs{GPU: r.Hardware.GPU, Model: r.Model.Preset}
	in.Args = []string{"--model", r.Model.Preset}
	for _, f := range r.Server.Flags {
		if isModelledFlag(f.Name) {
			in.Args = append(in.Args, f.Args()...)
		} else {
			in.Unmodelled = append(in.Unmodelled, f)
		}
	}
	in.Args = append(in.Args, "--sim-gpu", r.Hardware.GPU)
	if v := r.Server.VLLMVersion; v != "" {
		in.Args = append(in.Args, "--sim-vllm-version", v)
	}

	w := r.Workload
	if !w.LengthsPublished {
		return in, fmt.Errorf("row %s: %w", r.ID, ErrLengthsUnpublished)
	}
	sw := SimWorkload{
		IgnoreEOS:   w.IgnoreEOS,
		Concurrency: w.Concurrency,
		RequestRate: w.RequestRate,
		NumPrompts:  w.NumPrompts,
		Endpoint:    w.Endpoint,
	}
	if w.InputTokens > 0 {
		sw.InputTokens, sw.OutputTokens, sw.LengthsFrom = w.InputTokens, w.OutputTokens, LengthsFixed
		if out, ok := r.impliedOutputTokens(); ok && !w.IgnoreEOS && out < eosShortfall*float64(w.OutputTokens) {
			sw.OutputTokens, sw.LengthsFrom = int(math.Round(out)), LengthsOutputFromThroughput
			sw.OutputsVary, sw.MeanOutputTokens, sw.OutputCap = true, out, w.OutputTokens
		}
	} else {
		n := w.NumPrompts
		if r.Measured.Completed > 0 {
			n = r.Measured.Completed // totals count successful requests only
		}
		sw.InputTokens = int(math.Round(float64(w.TotalInputTokens) / float64(n)))
		sw.OutputTokens = int(math.Round(float64(w.TotalOutputTokens) / float64(n)))
		sw.LengthsFrom = LengthsMeanOfTotals
		sw.OutputsVary, sw.MeanOutputTokens = true, float64(w.TotalOutputTokens)/float64(n)
	}
	in.Workload = sw
	return in, nil
}

// impliedOutputTokens is the mean output length a fixed-input row's
// published throughputs imply: output tok/s ÷ req/s, or else input tokens ×
// output tok/s ÷ (total − output tok/s).
func (r Row) impliedOutputTokens() (float64, bool) {
	m := r.Measured
	switch {
	case m.OutputThroughput > 0 && m.RequestThroughput > 0:
		return m.OutputThroughput / m.RequestThroughput, true
	case m.OutputThroughput > 0 && m.TotalThroughput > m.OutputThroughput:
		return float64(r.Workload.InputTokens) * m.OutputThroughput / (m.TotalThroughput - m.OutputThroughput), true
	}
	return 0, false
}
