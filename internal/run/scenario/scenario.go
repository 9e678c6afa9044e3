// Package scenario reads the suite's scenarios: a workload (classes of
// requests built from fixtures), a load shape (concurrency points or
// request rates) and sampling (warm-up, requests per point, the metrics
// sampler), kept as YAML under scenarios/workloads/ and embedded. A
// scenario expands into Points, one load run each, at a Size: full for GPU
// runners, quick for CI, -short and `make bench`.
//
// A scenario file:
//
//	name: concurrency-sweep
//	description: what it shows
//	classes:                     # request classes, interleaved by weight
//	  - {name: medium, prompt: medium, max_tokens: 150}  # fixtures/prompts/medium.txt
//	  - {name: rand, prompt_tokens: 256, max_tokens: 64, weight: 2}  # random words
//	  - {name: chat, chat: assistant, conversations: 16, max_tokens: 64}  # fixtures/chats/
//	  - name: sharegpt           # a data set (docs/workloads.md): a file of
//	    dataset: {file: sharegpt.json, num_prompts: 8, seed: 1}  # fixtures/datasets/ or a path
//	points: mixed                # or each-class: one point per class
//	load:
//	  concurrency: [1, 2, 4]     # closed-loop points, or
//	  rate: [4, inf]             # open-loop points (requests/s), or
//	  trace: [1, 2]              # replay the one class's trace at these speeds, or
//	  ramp: {strategy: linear, start_rps: 1, end_rps: 20}  # one open loop whose
//	                             # rate climbs over the size's requests
//	  burstiness: 1              # open loop: gamma shape
//	  max_concurrency: 64        # open loop: cap in flight
//	warmup: 1
//	knee: true                   # compute the knee from the concurrency points
//	capacity: {over: rate, start: 4}  # instead of load's levels: search the
//	                             # highest rate (or concurrency) meeting the
//	                             # goodput SLO (package capacity); each
//	                             # run lasts at least its size's duration
//	                             # and requests
//	opt_in: true                 # the suite runs it only when named
//	                             # (VLLMPERF_SCENARIOS): it takes minutes
//	run_order: 1                 # runs before the scenarios without one
//	                             # (lowest first); the others by name
//	size:
//	  full: {waves: 8, min_requests: 32}   # or requests: N; duration: 2m
//	  quick: {requests: 8, max_tokens: 32, warmup: 1, sampler_interval: 250ms}
//	expect:
//	  batching: true             # running reaches min(concurrency, max-num-seqs)
//	  prefix_reuse: true         # prefix-cache hit rate is checked
//
// Decoding is strict: unknown keys, wrong types and missing fixtures are
// errors with file:line:col.
package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/vllmperf/vllmperf/fixtures"
	"github.com/vllmperf/vllmperf/internal/request/dataset"
	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/request/schema"
	"github.com/vllmperf/vllmperf/internal/request/workload"
	"github.com/vllmperf/vllmperf/internal/strictyaml"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/scenarios"
)

// Size selects how much load a scenario sends.
type Size string

// The sizes.
const (
	// Full is for GPU runners: enough requests per point for p99.
	Full Size = "full"
	// Quick is for CI, -short and `make bench` on the simulator: every
	// point, few requests each.
	Quick Size = "quick"
)

// ParseSize reads "full" or "quick" (VLLMPERF_SIZE).
func ParseSize(s string) (Size, error) {
	switch Size(strings.ToLower(strings.TrimSpace(s))) {
	case Full:
		return Full, nil
	case Quick:
		return Quick, nil
	default:
		return "", fmt.Errorf("size %q: want full (GPU runners) or quick (CI, -short, make bench)", s)
	}
}

// How often the metrics sampler scrapes during load when a size does not
// say: every 2 s at full size, as the seed article did; every 250 ms at
// quick size, whose points last seconds.
const (
	DefaultSamplerInterval      = 2 * time.Second
	DefaultQuickSamplerInterval = 250 * time.Millisecond
)

// Scenario is a parsed scenario file.
type Scenario struct {
	Name        string
	Description string
	// Classes are the request classes, in file order.
	Classes []workload.Class
	// EachClass makes one point per class instead of one mixed point.
	EachClass bool
	// Concurrency lists the closed-loop points; Rates the open-loop ones
	// (math.Inf(1) for inf). Exactly one of the two is set.
	Concurrency []int
	Rates       []float64
	// TraceSpeeds lists trace replays (speed factors): the scenario's one
	// class is a timed data set whose arrivals each point replays.
	TraceSpeeds []float64
	// Ramp, when set, makes one point per class group: an open loop whose
	// rate climbs from its start to its end over the size's requests
	// (vLLM's ramp-up, docs/load-shapes.md).
	Ramp *load.Ramp
	// ThinkTime is the pause between a reply and a live conversation's
	// next turn.
	ThinkTime time.Duration
	// Burstiness and MaxConcurrency shape open-loop points.
	Burstiness     float64
	MaxConcurrency int
	// Warmup requests go first at every point, one at a time.
	Warmup int
	// Knee asks for the concurrency knee over the points.
	Knee bool
	// Capacity, when set, makes the scenario a capacity search: no fixed
	// points, but runs at levels the search picks (CapacityPoint).
	Capacity *Capacity
	// RunOrder places the scenario in the suite's run (Names): scenarios
	// with one run first, lowest first; 0 (none) runs after them, by name.
	RunOrder int
	// OptIn keeps the scenario out of the suite's default list: it runs
	// when named (VLLMPERF_SCENARIOS).
	OptIn bool
	// Expect says which scenario-specific checks apply.
	Expect Expect
	// Sizes holds the sizing of each Size.
	Sizes map[Size]Sizing
	// Source is the file the scenario came from.
	Source string
}

// Expect lists the scenario-specific checks.
type Expect struct {
	// Batching: num_requests_running must reach min(concurrency,
	// max-num-seqs) at every closed-loop point.
	Batching bool `yaml:"batching"`
	// PrefixReuse: the prefix-cache hit rate is checked against the
	// thresholds' floor (caching on) or ceiling (caching off).
	PrefixReuse bool `yaml:"prefix_reuse"`
}

// Capacity is a capacity search's settings: what it varies, from where.
type Capacity struct {
	// Over is "rate" (open loop, Poisson arrivals) or "concurrency"
	// (closed loop).
	Over string `yaml:"over"`
	// Start is the first level run: req/s, or requests in flight.
	Start float64 `yaml:"start"`
}

// Sizing is how much load one point sends at a Size.
type Sizing struct {
	// Requests per point, or Waves × concurrency (at least MinRequests).
	Requests, Waves, MinRequests int
	// Duration bounds an open-loop point (with or without Requests).
	Duration time.Duration
	// MaxTokens, when set, replaces every class's max_tokens.
	MaxTokens int
	// Warmup, when set, replaces the scenario's warm-up count.
	Warmup *int
	// SamplerInterval is how often /metrics is sampled during load.
	SamplerInterval time.Duration
}

// requests returns the measured requests of a point at concurrency c
// (0 for open loop).
func (z Sizing) requests(c int) int {
	if z.Waves > 0 {
		return max(z.Waves*c, z.MinRequests)
	}
	return z.Requests
}

// Point is one load run of a scenario.
type Point struct {
	// Scenario is the scenario the point belongs to.
	Scenario *Scenario
	// Key names the point in benchmark names: "conc=8", "rate=4",
	// "prompt=short/conc=1".
	Key string
	// Classes are the point's request classes (max_tokens sized).
	Classes []workload.Class
	// Load is the point's load shape, sized.
	Load load.Config
	// SamplerInterval is how often /metrics is sampled during the run.
	SamplerInterval time.Duration
}

// Concurrency is the point's closed-loop concurrency, or its open-loop cap
// (0: none).
func (p Point) Concurrency() int {
	if p.Load.Concurrency > 0 {
		return p.Load.Concurrency
	}
	return p.Load.MaxConcurrency
}

// Points expands the scenario at size z, in run order; none for a
// capacity search, whose levels the search picks (CapacityPoint).
func (s *Scenario) Points(z Size) []Point {
	if s.Capacity != nil {
		return nil
	}
	sz, classes, warmup := s.sized(z)
	groups := [][]workload.Class{classes}
	if s.EachClass {
		groups = nil
		for _, c := range classes {
			groups = append(groups, []workload.Class{c})
		}
	}
	var out []Point
	for _, g := range groups {
		class := ""
		if s.EachClass {
			class = g[0].Name
		}
		first := len(out)
		for _, c := range s.Concurrency {
			out = append(out, Point{Scenario: s, Key: benchname.ClosedPoint(class, c), Classes: g, SamplerInterval: sz.SamplerInterval,
				Load: load.Config{Concurrency: c, Requests: sz.requests(c), Duration: sz.Duration, Warmup: warmup}})
		}
		for _, r := range s.Rates {
			out = append(out, Point{Scenario: s, Key: benchname.OpenPoint(class, FormatRate(r)), Classes: g, SamplerInterval: sz.SamplerInterval,
				Load: load.Config{Rate: r, Burstiness: s.Burstiness, MaxConcurrency: s.MaxConcurrency, Requests: sz.requests(0), Duration: sz.Duration, Warmup: warmup}})
		}
		if r := s.Ramp; r != nil {
			ramp := *r
			out = append(out, Point{Scenario: s, Key: benchname.RampPoint(class, string(r.Strategy)), Classes: g, SamplerInterval: sz.SamplerInterval,
				Load: load.Config{Ramp: &ramp, Burstiness: s.Burstiness, MaxConcurrency: s.MaxConcurrency, Requests: sz.requests(0), Warmup: warmup}})
		}
		for _, v := range s.TraceSpeeds {
			out = append(out, Point{Scenario: s, Key: benchname.TracePoint(class, FormatRate(v)), Classes: g, SamplerInterval: sz.SamplerInterval,
				Load: load.Config{Arrivals: scaled(g[0].Dataset.Arrivals(), v), MaxConcurrency: s.MaxConcurrency, Requests: sz.requests(0), Duration: sz.Duration, Warmup: warmup}})
		}
		if c := g[0].Chat; c != nil && c.Live {
			for i := first; i < len(out); i++ {
				out[i].Load.Turns, out[i].Load.ThinkTime = len(c.Turns), s.ThinkTime
			}
		}
	}
	return out
}

// CapacityPoint is a capacity search's run at size z before the search
// sets its level: the classes, warm-up, burstiness and sampler interval,
// with the size's requests and duration as the least each run sends and
// lasts (Load.Requests, Load.Duration).
func (s *Scenario) CapacityPoint(z Size) Point {
	sz, classes, warmup := s.sized(z)
	return Point{Scenario: s, Classes: classes, SamplerInterval: sz.SamplerInterval,
		Load: load.Config{Requests: sz.Requests, Duration: sz.Duration, Warmup: warmup, Burstiness: s.Burstiness}}
}

// sized is the scenario's sizing at z (the sampler interval's default
// filled in), its classes with max_tokens sized, and its warm-up.
func (s *Scenario) sized(z Size) (Sizing, []workload.Class, int) {
	sz := s.Sizes[z]
	if sz.SamplerInterval == 0 {
		sz.SamplerInterval = DefaultSamplerInterval
		if z == Quick {
			sz.SamplerInterval = DefaultQuickSamplerInterval
		}
	}
	classes := make([]workload.Class, len(s.Classes))
	copy(classes, s.Classes)
	if sz.MaxTokens > 0 {
		for i := range classes {
			classes[i].Config.MaxTokens = sz.MaxTokens
		}
	}
	warmup := s.Warmup
	if sz.Warmup != nil {
		warmup = *sz.Warmup
	}
	return sz, classes, warmup
}

// scaled divides a trace's arrival offsets by speed.
func scaled(at []time.Duration, speed float64) []time.Duration {
	out := make([]time.Duration, len(at))
	for i, d := range at {
		out[i] = time.Duration(float64(d) / speed)
	}
	return out
}

// ConfigLines are the benchfmt configuration lines of the scenario's data
// sets (dataset.ConfigKey: each class's Set.Describe, "; "-joined), to be
// printed before its benchmarks so the gate refuses to compare runs of
// other data; nil when it sends none.
func (s *Scenario) ConfigLines() [][2]string {
	var ds []string
	for _, c := range s.Classes {
		if c.Dataset != nil {
			ds = append(ds, c.Dataset.Describe())
		}
	}
	if len(ds) == 0 {
		return nil
	}
	return [][2]string{{dataset.ConfigKey, strings.Join(ds, "; ")}}
}

// FormatRate writes a request rate as in benchmark names: "4", "0.5", "inf".
func FormatRate(r float64) string {
	if math.IsInf(r, 1) {
		return "inf"
	}
	return strconv.FormatFloat(r, 'g', -1, 64)
}

// workloadDir is the folder of the embedded scenarios in scenarios.Workloads.
const workloadDir = "workloads"

// Names lists the built-in scenarios in the order the suite runs them:
// those with a run_order first, lowest first, then the others; by name
// within the same place.
func Names() []string {
	out := scenarios.Names(scenarios.Workloads, workloadDir)
	order := map[string]int{}
	for _, n := range out {
		order[n] = runOrder(n)
	}
	sort.SliceStable(out, func(i, j int) bool { return order[out[i]] < order[out[j]] })
	return out
}

// DefaultNames lists the built-in scenarios the suite runs when none are
// named: Names without the opt-in ones.
func DefaultNames() []string {
	var out []string
	for _, n := range Names() {
		if s, err := Builtin(n); err == nil && !s.OptIn {
			out = append(out, n)
		}
	}
	return out
}

// runOrder is the sort key of the built-in scenario called name: its
// run_order, or after every ordered one when it has none. Only that key
// is read (Builtin reports a broken file; it sorts last here).
func runOrder(name string) int {
	var f struct {
		RunOrder int `yaml:"run_order"`
	}
	data, err := fs.ReadFile(scenarios.Workloads, path.Join(workloadDir, name+".yaml"))
	if err != nil || yaml.Unmarshal(data, &f) != nil || f.RunOrder < 1 {
		return math.MaxInt
	}
	return f.RunOrder
}

// Builtin returns the built-in scenario called name.
func Builtin(name string) (*Scenario, error) {
	file := path.Join(workloadDir, name+".yaml")
	data, err := fs.ReadFile(scenarios.Workloads, file)
	if err != nil {
		return nil, fmt.Errorf("scenario %q is not built in: choose one of %s", name, strings.Join(Names(), ", "))
	}
	return Parse("scenarios/"+file, data)
}

// file is a scenario's YAML shape.
type file struct {
	Name        string                `yaml:"name"`
	Description string                `yaml:"description"`
	Classes     []classYAML           `yaml:"classes"`
	Points      string                `yaml:"points"`
	Load        loadYAML              `yaml:"load"`
	Warmup      *int                  `yaml:"warmup"`
	Knee        bool                  `yaml:"knee"`
	Capacity    *Capacity             `yaml:"capacity"`
	OptIn       bool                  `yaml:"opt_in"`
	RunOrder    *int                  `yaml:"run_order"`
	Size        map[string]sizingYAML `yaml:"size"`
	Expect      Expect                `yaml:"expect"`
}

type classYAML struct {
	Name          string       `yaml:"name"`
	Prompt        string       `yaml:"prompt"`
	PromptTokens  int          `yaml:"prompt_tokens"`
	Chat          string       `yaml:"chat"`
	Dataset       *datasetYAML `yaml:"dataset"`
	Conversations int          `yaml:"conversations"`
	Live          bool         `yaml:"live"`
	JSONSchema    string       `yaml:"json_schema"`
	Tool          string       `yaml:"tool"`
	MaxTokens     int          `yaml:"max_tokens"`
	Weight        int          `yaml:"weight"`
}

type loadYAML struct {
	Concurrency    []int        `yaml:"concurrency"`
	Rate           []rateYAML   `yaml:"rate"`
	Trace          []rateYAML   `yaml:"trace"`
	Ramp           *rampYAML    `yaml:"ramp"`
	ThinkTime      durationYAML `yaml:"think_time"`
	Burstiness     float64      `yaml:"burstiness"`
	MaxConcurrency int          `yaml:"max_concurrency"`
}

// rampYAML is a ramp-up: vLLM's --ramp-up-strategy, --ramp-up-start-rps
// and --ramp-up-end-rps.
type rampYAML struct {
	Strategy string  `yaml:"strategy"`
	StartRPS float64 `yaml:"start_rps"`
	EndRPS   float64 `yaml:"end_rps"`
}

// minRampRequests is the fewest requests a ramp scenario sends: four rate
// windows of 10 requests (package result cuts a ramp into windows of at
// least 10), so that two windows besides the first and the last are
// judged for saturation.
const minRampRequests = 40

// rateYAML is a request rate: a positive number or inf.
type rateYAML float64

// UnmarshalYAML reads a positive number or inf.
func (r *rateYAML) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && strings.EqualFold(n.Value, "inf") {
		*r = rateYAML(math.Inf(1))
		return nil
	}
	v, err := strconv.ParseFloat(n.Value, 64)
	if n.Kind != yaml.ScalarNode || err != nil || !(v > 0) || math.IsInf(v, 0) {
		return strictyaml.Errorf(n, "rate %q: want a positive number of requests per second, or inf", n.Value)
	}
	*r = rateYAML(v)
	return nil
}

// durationYAML is a Go duration (2m, 30s).
type durationYAML time.Duration

// UnmarshalYAML reads a Go duration with its unit.
func (d *durationYAML) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil || v <= 0 {
		return strictyaml.Errorf(n, "%q: want a positive duration with a unit, such as 250ms or 2m", n.Value)
	}
	*d = durationYAML(v)
	return nil
}

type sizingYAML struct {
	Requests        int          `yaml:"requests"`
	Waves           int          `yaml:"waves"`
	MinRequests     int          `yaml:"min_requests"`
	Duration        durationYAML `yaml:"duration"`
	MaxTokens       int          `yaml:"max_tokens"`
	Warmup          *int         `yaml:"warmup"`
	SamplerInterval durationYAML `yaml:"sampler_interval"`
}

// Parse parses a scenario file; source names it in errors.
func Parse(source string, data []byte) (*Scenario, error) {
	var f file
	root, err := strictyaml.DecodeNode(source, data, &f)
	if err != nil {
		return nil, err
	}
	at := func(key string) *yaml.Node {
		if n := strictyaml.Lookup(root, key); n != nil {
			return n
		}
		return root
	}
	bad := func(n *yaml.Node, format string, args ...any) error {
		return strictyaml.At(source, n, format, args...)
	}
	s := &Scenario{Name: f.Name, Description: f.Description, Source: source, Knee: f.Knee, Expect: f.Expect, Capacity: f.Capacity, OptIn: f.OptIn,
		Concurrency: f.Load.Concurrency, Burstiness: f.Load.Burstiness, MaxConcurrency: f.Load.MaxConcurrency, Warmup: 1, Sizes: map[Size]Sizing{}}
	if s.Name == "" {
		return nil, bad(root, "missing name: add `name: <scenario name>` at the top")
	}
	if f.Warmup != nil {
		if *f.Warmup < 0 {
			return nil, bad(at("warmup"), "warmup: %d: want 0 or more requests", *f.Warmup)
		}
		s.Warmup = *f.Warmup
	}
	if f.RunOrder != nil {
		if *f.RunOrder < 1 {
			return nil, bad(at("run_order"), "run_order: %d: want 1 or more (lowest runs first), or leave it out to run after the ordered scenarios", *f.RunOrder)
		}
		s.RunOrder = *f.RunOrder
	}
	switch f.Points {
	case "", "mixed":
	case "each-class":
		s.EachClass = true
	default:
		return nil, bad(at("points"), "points: %q: want mixed (one point with every class) or each-class (one point per class)", f.Points)
	}
	if s.Classes, err = parseClasses(source, strictyaml.Lookup(root, "classes"), f.Classes); err != nil {
		return nil, err
	}
	for _, r := range f.Load.Rate {
		s.Rates = append(s.Rates, float64(r))
	}
	loadNode := at("load")
	if err := s.parseTrace(f.Load.Trace); err != nil {
		return nil, bad(loadNode, "load: %v", err)
	}
	if err := s.parseLive(time.Duration(f.Load.ThinkTime)); err != nil {
		return nil, bad(loadNode, "load: %v", err)
	}
	if err := s.parseRamp(f.Load.Ramp); err != nil {
		n := loadNode
		if r := strictyaml.Lookup(loadNode, "ramp"); r != nil {
			n = r
		}
		return nil, bad(n, "load: ramp: %v", err)
	}
	if err := s.checkCapacity(source, at("capacity"), loadNode); err != nil {
		return nil, err
	}
	shapes := 0
	for _, n := range []int{len(s.Concurrency), len(s.Rates), len(s.TraceSpeeds)} {
		if n > 0 {
			shapes++
		}
	}
	if s.Ramp != nil {
		shapes++
	}
	switch {
	case s.Capacity != nil:
	case shapes == 0:
		return nil, bad(loadNode, "load: give concurrency: [N, ...] (closed loop), rate: [R, ...] (open loop), trace: [SPEED, ...] (a trace's replay) or ramp: {...} (a climbing rate)")
	case shapes > 1:
		return nil, bad(loadNode, "load: concurrency, rate, trace and ramp exclude each other: make one scenario each")
	case s.Knee && len(s.Concurrency) < 3:
		return nil, bad(at("knee"), "knee: needs at least 3 concurrency points to find where throughput stops growing")
	case len(s.Concurrency) > 0 && (s.MaxConcurrency != 0 || s.Burstiness != 0):
		return nil, bad(loadNode, "load: burstiness and max_concurrency shape open-loop (rate) points only")
	case len(s.TraceSpeeds) > 0 && s.Burstiness != 0:
		return nil, bad(loadNode, "load: burstiness shapes rate points; a trace's gaps are its own")
	case s.Burstiness < 0:
		return nil, bad(loadNode, "load: burstiness %v: must be positive (1 is Poisson)", s.Burstiness)
	}
	for _, c := range s.Concurrency {
		if c < 1 {
			return nil, bad(loadNode, "load: concurrency %d: want at least 1", c)
		}
	}
	if err := s.parseSizes(source, at("size"), f.Size); err != nil {
		return nil, err
	}
	return s, nil
}

// checkCapacity checks a capacity search's settings: what it varies, a
// start, and no fixed levels beside them.
func (s *Scenario) checkCapacity(source string, n, loadNode *yaml.Node) error {
	c := s.Capacity
	switch {
	case c == nil:
		return nil
	case c.Over != "rate" && c.Over != "concurrency":
		return strictyaml.At(source, n, "capacity: over %q: want rate (open loop, requests/s) or concurrency (closed loop)", c.Over)
	case !(c.Start > 0) || (c.Over == "concurrency" && c.Start != math.Trunc(c.Start)):
		return strictyaml.At(source, n, "capacity: start %v: want the first level to run, a positive rate or a whole concurrency", c.Start)
	case len(s.Concurrency) > 0 || len(s.Rates) > 0 || len(s.TraceSpeeds) > 0 || s.Ramp != nil:
		return strictyaml.At(source, loadNode, "load: a capacity search picks its own levels: drop concurrency:, rate:, trace: and ramp: (start the search with capacity.start)")
	case s.Knee:
		return strictyaml.At(source, n, "knee: needs fixed concurrency points, which a capacity search has not: make two scenarios")
	case s.MaxConcurrency != 0:
		return strictyaml.At(source, loadNode, "load: max_concurrency would hold an overload back in the client's queue, out of the server's sight: drop it from a capacity search")
	case c.Over == "concurrency" && s.Burstiness != 0:
		return strictyaml.At(source, loadNode, "load: burstiness shapes open-loop arrivals: drop it, or search over rate")
	}
	return nil
}

// parseClasses resolves the classes' fixtures.
func parseClasses(source string, seq *yaml.Node, ys []classYAML) ([]workload.Class, error) {
	if len(ys) == 0 {
		return nil, strictyaml.At(source, seq, "classes: give at least one request class, e.g. {name: medium, prompt: medium, max_tokens: 128}")
	}
	var out []workload.Class
	for i, y := range ys {
		n := seq
		if seq != nil && i < len(seq.Content) {
			n = seq.Content[i]
		}
		c, err := parseClass(y)
		if err != nil {
			return nil, strictyaml.At(source, n, "classes[%d]: %v", i, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// structured reads a class's json_schema: or tool: (a schema of
// fixtures/schemas/): its requests ask for structured output, and end
// when the document does (not sent with ignore_eos).
func structured(y classYAML, c *workload.Class) error {
	name, tool := y.JSONSchema, ""
	switch {
	case y.JSONSchema != "" && y.Tool != "":
		return errors.New("json_schema: and tool: exclude each other: one structured output a class")
	case y.Tool != "":
		name, tool = y.Tool, y.Tool
	case name == "":
		return nil
	}
	raw, err := fixtures.Schema(name)
	if err != nil {
		return err
	}
	s, err := schema.Compile(name, raw)
	if err != nil {
		return err
	}
	c.Config.Schema, c.Config.Tool, c.Config.IgnoreEOS = s, tool, false
	return nil
}

// parseTrace reads load.trace: speeds at which the scenario's one class,
// a timed data set, is replayed.
func (s *Scenario) parseTrace(speeds []rateYAML) error {
	if len(speeds) == 0 {
		return nil
	}
	if len(s.Classes) != 1 || s.Classes[0].Dataset == nil || !s.Classes[0].Dataset.Timed {
		return errors.New("trace: replays one class whose dataset: is a trace (JSON lines with a \"timestamp\"): give exactly that class")
	}
	for _, v := range speeds {
		if math.IsInf(float64(v), 1) {
			return errors.New("trace: speed inf: want a finite factor (2 replays twice as fast); use rate: [inf] to send all at once")
		}
		s.TraceSpeeds = append(s.TraceSpeeds, float64(v))
	}
	return nil
}

// parseRamp reads load.ramp: a strategy and the two rates, checked as
// vLLM's bench serve checks its --ramp-up-* flags.
func (s *Scenario) parseRamp(y *rampYAML) error {
	if y == nil {
		return nil
	}
	r := load.Ramp{Strategy: load.RampStrategy(y.Strategy), StartRPS: y.StartRPS, EndRPS: y.EndRPS}
	if err := r.Validate(); err != nil {
		return err
	}
	for _, c := range s.Classes {
		if c.Chat != nil && c.Chat.Live {
			return errors.New("a live chat's turns wait on their replies, so its rate cannot be walked: ramp rates of single requests")
		}
	}
	s.Ramp = &r
	return nil
}

// parseLive checks a live chat scenario: its chat is the point's only
// class, and think_time applies to it alone.
func (s *Scenario) parseLive(think time.Duration) error {
	live := 0
	for _, c := range s.Classes {
		if c.Chat != nil && c.Chat.Live {
			live++
		}
	}
	switch {
	case live > 0 && len(s.Classes) > 1 && !s.EachClass:
		return errors.New("a live chat class sends whole conversations: it must be its point's only class (points: each-class, or a scenario of its own)")
	case think > 0 && live == 0:
		return errors.New("think_time: applies to live chat classes (live: true) only")
	}
	s.ThinkTime = think
	return nil
}

// UseDataset makes class send set (vllmperf run --dataset) and shapes cfg
// for it: a trace's arrivals when cfg has neither Concurrency nor Rate
// (an error for a set without timestamps), and the set's size as the
// request count when nothing else bounds the run. Each entry's output
// length is its max_tokens unless capTokens keeps the class's as a cap.
func UseDataset(set *dataset.Set, cfg *load.Config, class *workload.Class, capTokens bool) error {
	class.Dataset, class.Config.PromptTokens, class.Config.SharedPrefixTokens = set, 0, 0
	if !capTokens {
		class.Config.MaxTokens = 0
	}
	switch {
	case set.Timed && cfg.Concurrency == 0 && cfg.Rate == 0:
		cfg.Arrivals = set.Arrivals()
	case cfg.Concurrency == 0 && cfg.Rate == 0:
		return errors.New("it has no timestamps to replay: say how to load the server with --concurrency N or --rate R")
	}
	if cfg.Requests == 0 && cfg.Duration == 0 {
		cfg.Requests = len(set.Entries)
	}
	return nil
}

// datasetYAML is a class's data set: a file and how to select from it
// (lengths in words; see package dataset).
type datasetYAML struct {
	File         string `yaml:"file"`
	NumPrompts   int    `yaml:"num_prompts"`
	Seed         uint64 `yaml:"seed"`
	MinPromptLen int    `yaml:"min_prompt_len"`
	MaxPromptLen int    `yaml:"max_prompt_len"`
	MinOutputLen int    `yaml:"min_output_len"`
	MaxOutputLen int    `yaml:"max_output_len"`
	MaxTotalLen  int    `yaml:"max_total_len"`
}

// load opens and selects the data set.
func (y datasetYAML) load() (*dataset.Set, error) {
	if y.File == "" {
		return nil, errors.New("dataset: missing file: name a file of fixtures/datasets/ or a path")
	}
	f, err := dataset.Open(fixtures.DatasetFS(), y.File)
	if err != nil {
		return nil, err
	}
	return f.Select(dataset.Options{NumPrompts: y.NumPrompts, Seed: y.Seed, Filter: dataset.Filter{
		MinPrompt: y.MinPromptLen, MaxPrompt: y.MaxPromptLen, MinOutput: y.MinOutputLen, MaxOutput: y.MaxOutputLen, MaxTotal: y.MaxTotalLen}})
}

func parseClass(y classYAML) (workload.Class, error) {
	c := workload.Class{Name: y.Name, Weight: max(y.Weight, 1), Config: workload.Config{MaxTokens: y.MaxTokens, IgnoreEOS: true}}
	var errs []error
	if y.Name == "" {
		errs = append(errs, errors.New("missing name"))
	}
	if y.Weight < 0 {
		errs = append(errs, fmt.Errorf("weight %d: want at least 1", y.Weight))
	}
	if y.MaxTokens < 1 && (y.Dataset == nil || y.MaxTokens < 0) {
		errs = append(errs, fmt.Errorf("max_tokens %d: want at least 1 (sent with ignore_eos, so exactly that many; a dataset's own lengths when left out)", y.MaxTokens))
	}
	sources := 0
	for _, set := range []bool{y.Prompt != "", y.PromptTokens != 0, y.Chat != "", y.Dataset != nil} {
		if set {
			sources++
		}
	}
	if sources != 1 {
		errs = append(errs, errors.New("give exactly one of prompt: (a fixture), prompt_tokens: (random words), chat: (a conversation fixture) and dataset: (a data set file)"))
	}
	if (y.Conversations != 0 || y.Live) && y.Chat == "" {
		errs = append(errs, errors.New("conversations: and live: apply to chat: classes only"))
	}
	if err := structured(y, &c); err != nil {
		errs = append(errs, err)
	}
	switch {
	case y.Prompt != "":
		body, err := fixtures.Prompt(y.Prompt)
		if err != nil {
			errs = append(errs, err)
		}
		c.Config.Body = body
	case y.PromptTokens != 0:
		c.Config.PromptTokens = y.PromptTokens
	case y.Dataset != nil:
		set, err := y.Dataset.load()
		if err != nil {
			errs = append(errs, err)
		}
		c.Dataset = set
	case y.Chat != "":
		chat, err := fixtures.LoadChat(y.Chat)
		if err != nil {
			errs = append(errs, err)
			break
		}
		system, err := fixtures.Prompt(chat.System)
		if err != nil {
			errs = append(errs, err)
		}
		switch {
		case y.Live && y.Conversations != 0:
			errs = append(errs, errors.New("conversations: with live: a live conversation is its own; the load's rate or concurrency says how many run at once"))
		case !y.Live && y.Conversations < 1:
			errs = append(errs, fmt.Errorf("conversations %d: want at least 1", y.Conversations))
		}
		c.Chat = &workload.Chat{System: system, Turns: chat.OpenAITurns(), Conversations: y.Conversations, Live: y.Live}
	}
	return c, errors.Join(errs...)
}

// parseSizes checks that both sizes are given and sensible.
func (s *Scenario) parseSizes(source string, n *yaml.Node, ys map[string]sizingYAML) error {
	for name := range ys {
		if _, err := ParseSize(name); err != nil {
			return strictyaml.At(source, n, "size: %v", err)
		}
	}
	for _, z := range []Size{Full, Quick} {
		y, ok := ys[string(z)]
		if !ok {
			return strictyaml.At(source, n, "size: missing %s: give both full: and quick:", z)
		}
		sz := Sizing{Requests: y.Requests, Waves: y.Waves, MinRequests: y.MinRequests, Duration: time.Duration(y.Duration),
			MaxTokens: y.MaxTokens, Warmup: y.Warmup, SamplerInterval: time.Duration(y.SamplerInterval)}
		switch {
		case sz.Requests < 0 || sz.Waves < 0 || sz.MinRequests < 0 || sz.MaxTokens < 0 || (sz.Warmup != nil && *sz.Warmup < 0):
			return strictyaml.At(source, n, "size: %s: counts cannot be negative", z)
		case sz.Requests > 0 && sz.Waves > 0:
			return strictyaml.At(source, n, "size: %s: requests and waves exclude each other", z)
		case sz.Waves > 0 && len(s.Concurrency) == 0:
			return strictyaml.At(source, n, "size: %s: waves size closed-loop points; use requests: or duration: for rates and traces", z)
		case s.Ramp != nil && (sz.Duration > 0 || sz.Requests < minRampRequests):
			return strictyaml.At(source, n, "size: %s: a ramp climbs over its requests, as vLLM's: give requests: %d or more (%d rate windows of 10 at least) and no duration: (it would cut the ramp short of its end rate)", z, minRampRequests, minRampRequests/10)
		case len(s.TraceSpeeds) > 0 && sz.Requests > len(s.Classes[0].Dataset.Entries):
			return strictyaml.At(source, n, "size: %s: requests %d: the trace has %d (leave requests out to replay it whole)", z, sz.Requests, len(s.Classes[0].Dataset.Entries))
		case sz.Requests == 0 && sz.Waves == 0 && sz.Duration == 0 && len(s.TraceSpeeds) == 0:
			return strictyaml.At(source, n, "size: %s: bound each point with requests:, waves: or duration:", z)
		}
		for _, r := range s.Rates {
			if math.IsInf(r, 1) && sz.Requests == 0 {
				return strictyaml.At(source, n, "size: %s: rate inf sends every request at once: give requests:", z)
			}
		}
		s.Sizes[z] = sz
	}
	return nil
}
