package calibration

import (
	"fmt"
	"time"
)

// Row is one published vLLM serving measurement: the hardware, model, server
// and workload it was taken on and the figures the source reports. Every
// figure is as published; a zero value means the source does not give it.
type Row struct {
	// ID names the row uniquely across the whole set (lower case, digits,
	// '.', '-').
	ID string
	// Split says whether the row may be used to fit the timing model (Fit) or
	// is held out to check it (Check); see the README for the rule.
	Split Split
	// Source is where the figures were published.
	Source Source
	// File and Line locate the row in the calibration data, for messages.
	File string
	Line int
	// Locator tells a reader where in the source the figures are (section,
	// table, code block) and quotes its label.
	Locator string
	// Note records anything a reader must know to use the row.
	Note string

	Hardware Hardware
	Model    Model
	Server   Server
	Workload Workload
	Measured Measured
}

// Runnable reports whether the row's workload can be replayed against the
// simulator: the source publishes the token lengths (fixed per request, or
// totals from which the mean per request follows).
func (r Row) Runnable() bool { return r.Workload.LengthsPublished }

// Split is the calibration role of a row.
type Split string

// The two splits.
const (
	// Fit rows may be used to fit timing-model parameters.
	Fit Split = "fit"
	// Check rows are held out: they are only compared against, never fitted.
	Check Split = "check"
)

// Source is a publication the rows come from.
type Source struct {
	// ID names the source (lower case, digits, '.', '-').
	ID string
	// Title is the publication's title.
	Title string
	// Publisher is who published it (project, company or author).
	Publisher string
	// URL is where it can be read; GitHub files are linked at a commit.
	URL string
	// Note says what the source measured and anything common to its rows.
	Note string
}

// Hardware is the GPU setup a row was measured on.
type Hardware struct {
	// GPU is the simulator's GPU preset (one of GPUPresets).
	GPU string
	// Published is the GPU as the source names it, e.g. "NVIDIA H100 SXM".
	Published string
	// Count is the number of GPUs the server used (its tensor-parallel size).
	Count int
	// Note explains a mapping to GPU that is not one to one (a variant the
	// source does not state, a close relative of the preset).
	Note string
}

// Shape says how the published model relates to the model preset.
type Shape string

// The model shapes.
const (
	// ShapeExact: the published model is the preset's model.
	ShapeExact Shape = "exact"
	// ShapeEquivalent: another model of the same architecture and size
	// (layers, hidden size, heads, KV heads); the note names any difference.
	ShapeEquivalent Shape = "equivalent"
	// ShapeApproximate: a different shape, mapped to the nearest preset; the
	// note says how it differs. Such rows weigh less as evidence.
	ShapeApproximate Shape = "approximate"
)

// Model is the model a row served.
type Model struct {
	// Preset is the simulator's model preset (one of ModelPresets).
	Preset string
	// Published is the model as the source names it.
	Published string
	// Shape relates Published to Preset.
	Shape Shape
	// Note explains a Shape other than ShapeExact.
	Note string
	// Dtype is the weights' dtype as published ("" when not stated).
	Dtype string
}

// Server is the vLLM server a row was measured against.
type Server struct {
	// VLLMVersion is the vLLM release, e.g. "0.11.0" ("" when not stated).
	VLLMVersion string
	// Command is the serve command as published, for the reader.
	Command string
	// Flags are the published vLLM serve flags, in published order.
	Flags []Flag
}

// Args renders the published flags as command-line arguments, in order.
func (s Server) Args() []string {
	var out []string
	for _, f := range s.Flags {
		out = append(out, f.Args()...)
	}
	return out
}

// Flag is one published vLLM serve flag.
type Flag struct {
	// Name is the flag without its leading "--", e.g. "max-num-seqs".
	Name string
	// Value is its value; empty for a bare flag.
	Value string
	// Bare is true for a flag written without a value.
	Bare bool
}

// Args renders the flag as command-line arguments.
func (f Flag) Args() []string {
	if f.Bare {
		return []string{"--" + f.Name}
	}
	return []string{"--" + f.Name, f.Value}
}

// Client is the benchmark client that produced a row.
type Client string

// The benchmark clients.
const (
	// ClientVLLMBenchServe is `vllm bench serve` or its predecessor
	// benchmarks/benchmark_serving.py (same metric definitions).
	ClientVLLMBenchServe Client = "vllm-bench-serve"
	// ClientVLLMBenchmarkLatency is vLLM's offline latency benchmark
	// (benchmark_latency.py / `vllm bench latency`): one batch through the
	// LLM class, no API server.
	ClientVLLMBenchmarkLatency Client = "vllm-benchmark-latency"
	// ClientSGLangBenchServing is `python -m sglang.bench_serving --backend vllm`.
	ClientSGLangBenchServing Client = "sglang-bench-serving"
	// ClientUnstated: the source does not name its client.
	ClientUnstated Client = "unstated"
)

// Endpoint is how requests reached vLLM.
type Endpoint string

// The endpoints.
const (
	// EndpointCompletions is /v1/completions.
	EndpointCompletions Endpoint = "completions"
	// EndpointChat is /v1/chat/completions (chat template applied).
	EndpointChat Endpoint = "chat"
	// EndpointOffline is no HTTP at all: the offline LLM class.
	EndpointOffline Endpoint = "offline"
	// EndpointUnstated: the source does not say.
	EndpointUnstated Endpoint = "unstated"
)

// Workload is the load a row was measured under.
type Workload struct {
	Client   Client
	Endpoint Endpoint
	// Dataset is "random" (fixed lengths) or "sharegpt".
	Dataset string
	// InputTokens and OutputTokens are the per-request lengths of a
	// fixed-length workload; 0 when lengths vary.
	InputTokens  int
	OutputTokens int
	// TotalInputTokens and TotalOutputTokens are the published totals of a
	// variable-length workload; 0 when not published.
	TotalInputTokens  int
	TotalOutputTokens int
	// LengthsPublished is false for rows whose source gives neither fixed
	// lengths nor totals; such rows cannot be replayed (see Row.Runnable).
	LengthsPublished bool
	// IgnoreEOS is true when the client forced every request to its output
	// length (--ignore-eos); false when not set or not stated.
	IgnoreEOS bool
	// Concurrency is the client's cap on requests in flight
	// (--max-concurrency, or the batch of an offline run); 0 = no cap.
	Concurrency int
	// RequestRate is the arrival rate in requests/s; +Inf sends all
	// requests at once (vLLM's --request-rate inf).
	RequestRate float64
	// NumPrompts is the number of requests sent; 0 when not published.
	NumPrompts int
}

// Measured are the figures a source reports for a row. Zero means not
// published.
type Measured struct {
	// Duration is the benchmark's wall time.
	Duration time.Duration
	// Completed is the number of successful requests.
	Completed int
	// RequestThroughput is completed requests per second.
	RequestThroughput float64
	// OutputThroughput is generated tokens per second.
	OutputThroughput float64
	// TotalThroughput is input plus generated tokens per second.
	TotalThroughput float64
	// TTFT is time to first token, TPOT time per output token after the
	// first, ITL inter-token latency, E2EL end-to-end request latency, all as
	// vLLM's benchmark defines them.
	TTFT, TPOT, ITL, E2EL Latency
}

// Latency is one latency metric's published statistics; zero fields are not
// published.
type Latency struct {
	Mean, Median, P95, P99 time.Duration
}

// Published reports whether any statistic of the metric is published.
func (l Latency) Published() bool {
	return l.Mean > 0 || l.Median > 0 || l.P95 > 0 || l.P99 > 0
}

// String renders the published statistics, e.g. "mean 7.28ms median 7.22ms".
func (l Latency) String() string {
	s := ""
	for _, st := range []struct {
		name string
		d    time.Duration
	}{{"mean", l.Mean}, {"median", l.Median}, {"p95", l.P95}, {"p99", l.P99}} {
		if st.d > 0 {
			if s != "" {
				s += " "
			}
			s += fmt.Sprintf("%s %v", st.name, st.d)
		}
	}
	return s
}
