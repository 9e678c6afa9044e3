package calibration

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// idPattern is the form of row and source ids.
var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*$`)

// versionPattern is the form of a vLLM version: 0.11.0, 0.10.1.1, 0.6.3.post2.
var versionPattern = regexp.MustCompile(`^[0-9]+\.[0-9]+(\.[0-9A-Za-z]+)*$`)

// Plausibility bounds: a published figure outside them is a typo or a wrong
// unit (seconds written as milliseconds), not a measurement.
const (
	maxTPOT        = 10 * time.Second
	maxITL         = time.Minute
	maxTTFT        = time.Hour
	maxE2EL        = 4 * time.Hour
	maxThroughput  = 1e7     // tokens/s
	maxTokens      = 1 << 21 // per request
	maxTotalTokens = 1 << 30 // per benchmark
)

// convertSource validates the file's source block.
func convertSource(file string, top *yaml.Node, d sourceDoc) (Source, []error) {
	var errs []error
	bad := func(key, msg string) {
		errs = append(errs, &Error{File: file, Line: keyLine(top, "source", key), Msg: "source." + key + ": " + msg})
	}
	if d.ID == "" {
		bad("id", "missing: name the source (e.g. `id: gpustack-qwen3-8b-h100-latency`)")
	} else if !idPattern.MatchString(d.ID) {
		bad("id", fmt.Sprintf("%q: use lower case letters, digits, '.' and '-'", d.ID))
	}
	if d.Title == "" {
		bad("title", "missing: give the publication's title")
	}
	if d.Publisher == "" {
		bad("publisher", "missing: say who published the figures")
	}
	switch {
	case d.URL == "":
		bad("url", "missing: give the address where the figures can be read")
	case !strings.HasPrefix(d.URL, "https://") && !strings.HasPrefix(d.URL, "http://"):
		bad("url", fmt.Sprintf("%q is not a web address: write it with https://", d.URL))
	}
	return Source(d), errs
}

// converter turns one row's YAML into a Row, collecting every problem with
// the line of the field it concerns.
type converter struct {
	file string
	node *yaml.Node // the row's mapping node
	id   string
	errs []error
}

// errf records a problem at the key path (nil: the row itself).
func (c *converter) errf(keys []string, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if len(keys) > 0 {
		msg = strings.Join(keys, ".") + ": " + msg
	}
	c.errs = append(c.errs, &Error{File: c.file, Line: keyLine(c.node, keys...), Row: c.id, Msg: msg})
}

func (c *converter) row(d rowDoc, src Source) Row {
	r := Row{ID: d.ID, Source: src, File: c.file, Line: c.node.Line, Locator: d.Locator, Note: d.Note}
	if c.id == "" {
		c.id = fmt.Sprintf("#%d", c.node.Line)
		c.errf([]string{"id"}, "missing: give the row an id unique across the set")
	} else if !idPattern.MatchString(d.ID) {
		c.errf([]string{"id"}, "%q: use lower case letters, digits, '.' and '-'", d.ID)
	}
	switch Split(d.Split) {
	case Fit, Check:
		r.Split = Split(d.Split)
	case "":
		c.errf([]string{"split"}, "missing: write `split: fit` or `split: check` as the split rule assigns (README.md)")
	default:
		c.errf([]string{"split"}, "%q: want fit or check", d.Split)
	}
	if strings.TrimSpace(d.Locator) == "" {
		c.errf([]string{"locator"}, "missing: say where in the source the figures are (section, table, quoted label)")
	}
	r.Hardware = c.hardware(d.Hardware)
	r.Model = c.model(d.Model)
	r.Server = c.server(d.Server)
	c.checkTensorParallel(r)
	r.Workload = c.workload(d.Workload)
	r.Measured = c.measured(d.Measured)
	c.checkCounts(r)
	return r
}

func (c *converter) hardware(d hardwareDoc) Hardware {
	h := Hardware{GPU: d.GPU, Published: d.Published, Note: d.Note}
	switch {
	case d.GPU == "":
		c.errf([]string{"hardware", "gpu"}, "missing: name the simulator's GPU preset (%s)", strings.Join(GPUPresets, ", "))
	case !isGPUPreset(d.GPU):
		c.errf([]string{"hardware", "gpu"}, "%q is not a simulator GPU preset: use one of %s", d.GPU, strings.Join(GPUPresets, ", "))
	}
	if d.Published == "" {
		c.errf([]string{"hardware", "published"}, "missing: write the GPU as the source names it")
	}
	switch {
	case d.Count == nil:
		c.errf([]string{"hardware", "count"}, "missing: write the number of GPUs the server used")
	case *d.Count < 1 || *d.Count > 64:
		c.errf([]string{"hardware", "count"}, "%d: want 1 to 64 GPUs", *d.Count)
	default:
		h.Count = *d.Count
	}
	return h
}

func (c *converter) model(d modelDoc) Model {
	m := Model{Preset: d.Preset, Published: d.Published, Note: d.Note, Dtype: d.Dtype}
	switch {
	case d.Preset == "":
		c.errf([]string{"model", "preset"}, "missing: name the simulator's model preset (%s)", strings.Join(ModelPresets, ", "))
	case !isModelPreset(d.Preset):
		c.errf([]string{"model", "preset"}, "%q is not a simulator model preset: use one of %s", d.Preset, strings.Join(ModelPresets, ", "))
	}
	if d.Published == "" {
		c.errf([]string{"model", "published"}, "missing: write the model as the source names it")
	}
	switch Shape(d.Shape) {
	case ShapeExact:
		m.Shape = ShapeExact
	case ShapeEquivalent, ShapeApproximate:
		m.Shape = Shape(d.Shape)
		if strings.TrimSpace(d.Note) == "" {
			c.errf([]string{"model", "note"}, "missing: shape %s needs a note saying how %q differs from %s", d.Shape, d.Published, d.Preset)
		}
	case "":
		c.errf([]string{"model", "shape"}, "missing: write exact, equivalent or approximate")
	default:
		c.errf([]string{"model", "shape"}, "%q: want exact, equivalent or approximate", d.Shape)
	}
	return m
}

func (c *converter) server(d serverDoc) Server {
	s := Server{VLLMVersion: d.VLLMVersion, Command: d.Command}
	if d.VLLMVersion != "" && !versionPattern.MatchString(d.VLLMVersion) {
		c.errf([]string{"server", "vllm_version"}, "%q: write the release as published without a leading v, e.g. 0.11.0 (leave it out when not stated)", d.VLLMVersion)
	}
	s.Flags = c.flags(&d.Flags)
	return s
}

// flags reads the ordered mapping of flag name to published value.
func (c *converter) flags(n *yaml.Node) []Flag {
	keys := []string{"server", "flags"}
	if n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		c.errf(keys, "must be a mapping of flag name to value, e.g. `max-num-seqs: 16` (`flags: {}` for none)")
		return nil
	}
	var out []Flag
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		bad := func(format string, a ...any) {
			c.errs = append(c.errs, &Error{File: c.file, Line: k.Line, Row: c.id, Msg: "server.flags." + k.Value + ": " + fmt.Sprintf(format, a...)})
		}
		switch {
		case strings.HasPrefix(k.Value, "-"):
			bad("write the flag name without the leading --")
			continue
		case seen[k.Value]:
			bad("set twice: keep one")
			continue
		}
		seen[k.Value] = true
		if v.Kind != yaml.ScalarNode {
			bad("value must be a single value as published (quote JSON values)")
			continue
		}
		switch v.Tag {
		case "!!null":
			bad("no value: write `true` for a flag published without a value")
		case "!!bool":
			if v.Value != "true" {
				bad("%s: only `true` (a bare flag) is allowed; write the --no- form's name for a negated flag", v.Value)
				continue
			}
			out = append(out, Flag{Name: k.Value, Bare: true})
		default:
			out = append(out, Flag{Name: k.Value, Value: v.Value})
		}
	}
	return out
}

// checkTensorParallel checks that the GPU count is the tensor-parallel size:
// the simulator models one replica, so a row's GPUs must all serve it.
func (c *converter) checkTensorParallel(r Row) {
	tp := 1
	for _, f := range r.Server.Flags {
		if f.Name == "tensor-parallel-size" || f.Name == "tp" {
			n, err := strconv.Atoi(f.Value)
			if err != nil || n < 1 {
				c.errf([]string{"server", "flags", f.Name}, "%q: want a whole number >= 1", f.Value)
				return
			}
			tp = n
		}
	}
	if r.Hardware.Count > 0 && r.Hardware.Count != tp {
		c.errf([]string{"hardware", "count"}, "%d GPUs but tensor-parallel-size %d: a row measures one replica, so set `tensor-parallel-size: %d` under server.flags or correct the count", r.Hardware.Count, tp, r.Hardware.Count)
	}
}

var (
	clients   = []Client{ClientVLLMBenchServe, ClientVLLMBenchmarkLatency, ClientSGLangBenchServing, ClientUnstated}
	endpoints = []Endpoint{EndpointCompletions, EndpointChat, EndpointOffline, EndpointUnstated}
	datasets  = []string{"random", "sharegpt"}
)

func (c *converter) workload(d workloadDoc) Workload {
	k := func(key string) []string { return []string{"workload", key} }
	w := Workload{Client: Client(d.Client), Endpoint: Endpoint(d.Endpoint), Dataset: d.Dataset}
	if !slices.Contains(clients, w.Client) {
		c.errf(k("client"), "%q: want one of %s", d.Client, joinAny(clients))
	}
	if !slices.Contains(endpoints, w.Endpoint) {
		c.errf(k("endpoint"), "%q: want one of %s", d.Endpoint, joinAny(endpoints))
	}
	if (w.Client == ClientVLLMBenchmarkLatency) != (w.Endpoint == EndpointOffline) && slices.Contains(clients, w.Client) && slices.Contains(endpoints, w.Endpoint) {
		c.errf(k("endpoint"), "%q with client %q: the offline latency benchmark, and only it, has endpoint offline", d.Endpoint, d.Client)
	}
	if !slices.Contains(datasets, d.Dataset) {
		c.errf(k("dataset"), "%q: want one of %s", d.Dataset, strings.Join(datasets, ", "))
	}
	w.InputTokens = c.tokens(k("input_tokens"), d.InputTokens, maxTokens)
	w.OutputTokens = c.tokens(k("output_tokens"), d.OutputTokens, maxTokens)
	w.TotalInputTokens = c.tokens(k("total_input_tokens"), d.TotalInputTokens, maxTotalTokens)
	w.TotalOutputTokens = c.tokens(k("total_output_tokens"), d.TotalOutputTokens, maxTotalTokens)
	fixed := d.InputTokens != nil || d.OutputTokens != nil
	totals := d.TotalInputTokens != nil || d.TotalOutputTokens != nil
	switch {
	case d.LengthsPublished != nil && !*d.LengthsPublished:
		if fixed || totals {
			c.errf(k("lengths_published"), "false, yet token lengths are given: drop the flag or the lengths")
		}
	case d.LengthsPublished != nil:
		c.errf(k("lengths_published"), "only `false` is meaningful (lengths are required otherwise); remove the key")
	case fixed && totals:
		c.errf(k("input_tokens"), "give either fixed per-request lengths or published totals, not both")
	case fixed:
		if d.InputTokens == nil || d.OutputTokens == nil {
			c.errf(k("input_tokens"), "a fixed-length workload needs both input_tokens and output_tokens")
		}
		w.LengthsPublished = true
	case totals:
		if d.TotalInputTokens == nil || d.TotalOutputTokens == nil {
			c.errf(k("total_input_tokens"), "published totals need both total_input_tokens and total_output_tokens")
		}
		w.LengthsPublished = true
	default:
		c.errf(k("input_tokens"), "no token lengths: give input_tokens/output_tokens (fixed), total_input_tokens/total_output_tokens (as published), or `lengths_published: false` when the source gives neither")
	}
	if d.IgnoreEOS != nil {
		w.IgnoreEOS = *d.IgnoreEOS
	}
	if d.Concurrency != nil {
		if *d.Concurrency < 1 {
			c.errf(k("concurrency"), "%d: want >= 1 (leave it out for no cap)", *d.Concurrency)
		}
		w.Concurrency = *d.Concurrency
	}
	w.RequestRate = c.rate(d.RequestRate)
	if d.NumPrompts != nil {
		if *d.NumPrompts < 1 {
			c.errf(k("num_prompts"), "%d: want >= 1 (leave it out when not published)", *d.NumPrompts)
		}
		w.NumPrompts = *d.NumPrompts
	}
	return w
}

// tokens validates an optional token count.
func (c *converter) tokens(keys []string, v *int, limit int) int {
	if v == nil {
		return 0
	}
	if *v < 1 || *v > limit {
		c.errf(keys, "%d: want a token count from 1 to %d", *v, limit)
		return 0
	}
	return *v
}

// rate parses request_rate: "inf" or a number of requests per second.
func (c *converter) rate(v *string) float64 {
	keys := []string{"workload", "request_rate"}
	if v == nil {
		c.errf(keys, "missing: write `inf` (all requests at once) or the requests per second")
		return 0
	}
	if *v == "inf" {
		return math.Inf(1)
	}
	f, err := strconv.ParseFloat(*v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
		c.errf(keys, "%q: write `inf` or a number of requests per second > 0", *v)
		return 0
	}
	return f
}

func (c *converter) measured(d measuredDoc) Measured {
	k := func(key string) []string { return []string{"measured", key} }
	var m Measured
	if d.DurationS != nil {
		m.Duration = c.seconds(k("duration_s"), *d.DurationS)
	}
	if d.Completed != nil {
		if *d.Completed < 1 {
			c.errf(k("completed"), "%d: want >= 1 successful requests", *d.Completed)
		}
		m.Completed = *d.Completed
	}
	m.RequestThroughput = c.throughput(k("request_throughput"), d.RequestThroughput)
	m.OutputThroughput = c.throughput(k("output_throughput"), d.OutputThroughput)
	m.TotalThroughput = c.throughput(k("total_throughput"), d.TotalThroughput)
	if m.OutputThroughput > 0 && m.TotalThroughput > 0 && m.OutputThroughput > m.TotalThroughput {
		c.errf(k("output_throughput"), "%g tok/s is above total_throughput %g tok/s: total counts input and output tokens", m.OutputThroughput, m.TotalThroughput)
	}
	m.TTFT = c.latency("ttft_ms", d.TTFT, maxTTFT)
	m.TPOT = c.latency("tpot_ms", d.TPOT, maxTPOT)
	m.ITL = c.latency("itl_ms", d.ITL, maxITL)
	m.E2EL = c.latency("e2el_ms", d.E2EL, maxE2EL)
	if m.TTFT.Mean > 0 && m.E2EL.Mean > 0 && m.E2EL.Mean < m.TTFT.Mean {
		c.errf(k("e2el_ms"), "mean %v is below mean TTFT %v: a request ends after its first token", m.E2EL.Mean, m.TTFT.Mean)
	}
	if m.Duration == 0 && m.Completed == 0 && m.RequestThroughput == 0 && m.OutputThroughput == 0 &&
		m.TotalThroughput == 0 && !m.TTFT.Published() && !m.TPOT.Published() && !m.ITL.Published() && !m.E2EL.Published() {
		c.errf([]string{"measured"}, "no figure: give at least one published measurement")
	}
	return m
}

func (c *converter) seconds(keys []string, s float64) time.Duration {
	if math.IsNaN(s) || s <= 0 || s > maxE2EL.Seconds()*10 {
		c.errf(keys, "%g: want a duration in seconds > 0", s)
		return 0
	}
	return time.Duration(math.Round(s * float64(time.Second)))
}

func (c *converter) throughput(keys []string, v *float64) float64 {
	if v == nil {
		return 0
	}
	if math.IsNaN(*v) || *v <= 0 || *v > maxThroughput {
		c.errf(keys, "%g: want a throughput > 0 (leave it out when not published)", *v)
		return 0
	}
	return *v
}

// latency converts one metric's statistics from milliseconds, checking each
// is positive and plausible and that median <= p95 <= p99.
func (c *converter) latency(key string, d *latencyDoc, limit time.Duration) Latency {
	var l Latency
	if d == nil {
		return l
	}
	conv := func(stat string, v *float64) time.Duration {
		if v == nil {
			return 0
		}
		keys := []string{"measured", key, stat}
		ms := *v
		if math.IsNaN(ms) || ms <= 0 {
			c.errf(keys, "%g: a latency must be > 0 ms (leave it out when not published)", ms)
			return 0
		}
		dur := time.Duration(math.Round(ms * float64(time.Millisecond)))
		if dur > limit {
			c.errf(keys, "%g ms is above the plausible %v: is it in seconds, or a typo?", ms, limit)
			return 0
		}
		return dur
	}
	l.Mean = conv("mean", d.Mean)
	l.Median = conv("median", d.Median)
	l.P95 = conv("p95", d.P95)
	l.P99 = conv("p99", d.P99)
	order := []struct {
		name string
		d    time.Duration
	}{{"median", l.Median}, {"p95", l.P95}, {"p99", l.P99}}
	for i := 0; i < len(order); i++ {
		for j := i + 1; j < len(order); j++ {
			lo, hi := order[i], order[j]
			if lo.d > 0 && hi.d > 0 && hi.d < lo.d {
				c.errf([]string{"measured", key, hi.name}, "%v is below the %s %v: percentiles cannot decrease", hi.d, lo.name, lo.d)
			}
		}
	}
	if !l.Published() {
		c.errf([]string{"measured", key}, "no statistic: give mean, median, p95 or p99, or remove the key")
	}
	return l
}

// checkCounts checks counts that relate workload and measurement.
func (c *converter) checkCounts(r Row) {
	w, m := r.Workload, r.Measured
	if w.NumPrompts > 0 && m.Completed > w.NumPrompts {
		c.errf([]string{"measured", "completed"}, "%d completed requests but num_prompts is %d", m.Completed, w.NumPrompts)
	}
	if w.TotalInputTokens > 0 && w.NumPrompts == 0 && m.Completed == 0 {
		c.errf([]string{"workload", "num_prompts"}, "published totals need the number of requests (num_prompts or measured.completed) to give a mean length")
	}
}

// joinAny joins string-like values with ", ".
func joinAny[T ~string](vs []T) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}
