package metrics

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vllmperf/vllmperf/internal/vllmsim/argcheck"
	"github.com/vllmperf/vllmperf/internal/vllmsim/simpace"
)

// Family is the server whose /metrics the simulator imitates: its series'
// names, types, labels and buckets.
type Family string

// The families.
const (
	VLLM   Family = "vllm"
	SGLang Family = "sglang"
)

// Families are the valid --sim-family values, the default first.
var Families = []Family{VLLM, SGLang}

// FamilyNames are Families as strings.
func FamilyNames() []string {
	names := make([]string, len(Families))
	for i, f := range Families {
		names[i] = string(f)
	}
	return names
}

// ParseFamily reads a --sim-family value; "" is VLLM.
func ParseFamily(s string) (Family, error) {
	if s == "" {
		return VLLM, nil
	}
	for _, f := range Families {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("invalid choice: '%s' (choose from %s)", s, argcheck.Quote(FamilyNames()))
}

// Cache is what vLLM's cache_config_info reports.
type Cache struct {
	BlockSize            int
	Dtype                string
	PrefixCaching        bool
	GPUMemoryUtilization float64
	NumGPUBlocks         int
	SwapSpace            string // as vLLM prints it: "4" by default, "8.0" when given
}

// Setup is what the series need from the engine's configuration.
type Setup struct {
	Family      Family
	ModelName   string
	V09         bool // vLLM 0.9's names (--sim-metrics-version 0.9)
	Cache       Cache
	MaxModelLen int
	SpecTokens  int    // draft tokens per step; 0: no speculative decoding
	MaxLoRAs    string // the effective --max-loras; "": LoRA disabled
}

// Finished is one finished request's timeline and sizes.
type Finished struct {
	Arrival, Queued, FirstScheduled, FirstToken, End time.Time
	PromptLen, Generated, MaxTokens, Preemptions     int
	Guided                                           bool
}

// Set holds the engine's collectors in one family's names. The exported
// collectors are served by both families unless their comment says
// otherwise; those a family does not serve are live but unregistered, so
// the engine records into them alike.
type Set struct {
	Running, Waiting, KVUsage                          prometheus.Gauge
	PromptTokens, GenerationTokens, PromptTokensCached prometheus.Counter
	Preemptions                                        prometheus.Counter
	TTFT                                               prometheus.Observer
	// Modelled, Lost and BehindRatio are the simulator's own pace series
	// (package simpace), in both families.
	Modelled, Lost prometheus.Counter
	BehindRatio    prometheus.Gauge

	// vLLM only.
	PrefixQueries, PrefixHits                 prometheus.Counter
	IterTokens                                prometheus.Observer
	Success                                   map[string]prometheus.Counter
	SpecDrafts, SpecDraftTokens, SpecAccepted prometheus.Counter // nil without speculative decoding
	SpecPerPos                                []prometheus.Counter
	LoRA                                      *prometheus.GaugeVec // vllm:lora_requests_info; nil without LoRA

	v  *vllmSeries   // nil in SGLang's family
	g  *sglangSeries // nil in vLLM's
	cs []prometheus.Collector
}

// New makes the engine's series in st.Family's names and registers them on
// reg (nil: not registered).
func New(st Setup, reg prometheus.Registerer) (*Set, error) {
	s := &Set{}
	switch st.Family {
	case VLLM, "":
		s.addVLLM(&builder{labels: prometheus.Labels{"model_name": st.ModelName, "engine": "0"}}, st)
	case SGLang:
		s.addSGLang(st)
	default:
		_, err := ParseFamily(string(st.Family))
		return nil, err
	}
	if reg != nil {
		if err := s.register(reg); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// register registers every served collector on reg, or none.
func (s *Set) register(reg prometheus.Registerer) error {
	cs := s.cs
	for i, c := range cs {
		if err := reg.Register(c); err != nil {
			for _, done := range cs[:i] {
				reg.Unregister(done)
			}
			return fmt.Errorf("register engine metrics: %w (use a fresh prometheus.Registry per engine)", err)
		}
	}
	return nil
}

// FinishedRequest records a request that finished for reason ("stop",
// "length", "abort" or "error").
func (s *Set) FinishedRequest(reason string, r Finished) {
	if s.v != nil {
		s.Success[reason].Inc()
		s.v.finished(reason, r)
		return
	}
	s.g.finished(reason, r)
}

// TokenGap records the gap of gap seconds before an output of n tokens
// other than a request's first: vLLM observes the gap once, SGLang
// spreads it over the n tokens.
func (s *Set) TokenGap(gap float64, n int) {
	if s.v != nil {
		s.v.itl.Observe(gap)
		return
	}
	s.g.tokenGap(gap, n)
}

// Scheduled records a request's first scheduling after queue seconds of
// waiting, and its prefix-cache lookup (queried tokens, hit tokens) when
// prefix caching is on.
func (s *Set) Scheduled(queue float64, caching bool, queried, hit int) {
	if caching {
		s.PrefixQueries.Add(float64(queried))
		s.PrefixHits.Add(float64(hit))
	}
	if s.g != nil {
		s.g.scheduled(queue, caching, queried, hit)
	}
}

// Drafted records one request's speculative decoding in a step: drafts
// draft tokens proposed, accepted of them accepted.
func (s *Set) Drafted(drafts, accepted int) {
	s.SpecDrafts.Inc()
	s.SpecDraftTokens.Add(float64(drafts))
	s.SpecAccepted.Add(float64(accepted))
	for i := 0; i < accepted; i++ {
		s.SpecPerPos[i].Inc()
	}
	if s.g != nil {
		s.g.drafted(drafts, accepted)
	}
}

// Gauges sets the gauges after a step.
func (s *Set) Gauges(running, waiting int, kvUsage float64) {
	s.Running.Set(float64(running))
	s.Waiting.Set(float64(waiting))
	s.KVUsage.Set(kvUsage)
	if s.v != nil {
		s.v.gauges(waiting)
		return
	}
	s.g.gauges()
}

// addPace makes the simulator's pace series (package simpace) on b.
func (s *Set) addPace(b *builder) {
	s.Modelled = b.counter(simpace.MetricModelledSeconds, "vllmperf simulator (not a vLLM metric): engine time its timing model asked for, run in real time, in seconds.")
	s.Lost = b.counter(simpace.MetricLostSeconds, "vllmperf simulator (not a vLLM metric): engine time lost because the host woke the engine loop later than its schedule "+
		"by more than the catch-up window, in seconds; the engine served that much less than its model computes.")
	s.BehindRatio = b.gauge(simpace.MetricBehindRatio, "vllmperf simulator (not a vLLM metric): engine time lost to the host per second of engine activity, "+
		"over the last second of it; above 0.05 the figures measured are the host's, not the model's.")
}

// builder makes collectors with constant labels and keeps them for
// registration; a builder with skip set keeps none (the series a family
// does not serve).
type builder struct {
	labels prometheus.Labels
	cs     []prometheus.Collector
	skip   bool
}

func (b *builder) keep(c prometheus.Collector) {
	if !b.skip {
		b.cs = append(b.cs, c)
	}
}

func (b *builder) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: b.labels})
	b.keep(g)
	return g
}

func (b *builder) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: b.labels})
	b.keep(c)
	return c
}

func (b *builder) counterVec(name, help, label string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: b.labels}, []string{label})
	b.keep(c)
	return c
}

func (b *builder) hist(name, help string, buckets []float64) prometheus.Observer {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets, ConstLabels: b.labels})
	b.keep(h)
	return h
}
