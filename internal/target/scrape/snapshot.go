package scrape

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
)

// Kind is what a metric measures, as the exposition's # TYPE line (or, for
// untyped samples, the catalogue of vLLM names) says.
type Kind string

// The kinds of metric a Snapshot holds.
const (
	KindGauge     Kind = "gauge"
	KindCounter   Kind = "counter"
	KindHistogram Kind = "histogram"
	// KindInfo is a gauge of value 1 whose labels carry the information,
	// such as cache_config_info.
	KindInfo Kind = "info"
	// KindUntyped is a sample with neither a # TYPE line nor a known name.
	KindUntyped Kind = "untyped"
)

// Snapshot is one parsed /metrics exposition: the vLLM metrics by canonical
// name, each summed over the engine and model_name label sets (the KV-cache
// usage ratio takes the fullest engine instead).
type Snapshot struct {
	// Source is the URL or file the exposition came from.
	Source string
	// ScrapedAt is when the response headers arrived; for ParseFile, the
	// file's modification time.
	ScrapedAt time.Time
	// Engines and Models are the engine and model_name label values seen.
	Engines, Models []string
	// Renamed lists the metrics found under a pre-V1 name.
	Renamed []Rename
	// Ignored lists the families left out of the snapshot, with the reason.
	Ignored []Ignored
	// Warnings are oddities that did not stop the parse (a histogram whose
	// +Inf bucket disagrees with its _count, info labels that differ between
	// engines).
	Warnings []string
	// ProcessStart is process_start_time_seconds (Unix seconds), 0 when the
	// server does not expose it. A change between two snapshots means the
	// server restarted, whatever its counters say.
	ProcessStart float64
	// ProcessStarts holds each replica's process_start_time_seconds, by
	// its LabelReplica value, for a fleet's snapshot (Fleet, Prometheus);
	// nil for one server. Restarts are judged per replica.
	ProcessStarts map[string]float64
	// Replicas lists the replicas a fleet's snapshot sums (their
	// LabelReplica values); nil for one server.
	Replicas []string
	// Model is the model_name the series were filtered to (WithModel), ""
	// when every model's series are summed. Models still lists every
	// model_name seen, the filtered-out ones included.
	Model string
	// Created holds, by canonical name, the newest _created timestamp of a
	// counter or histogram (Python's prometheus_client writes them): a
	// later one means the series were created anew. In a fleet's snapshot
	// the key carries the replica: NAME{replica="URL"}.
	Created map[string]float64

	metrics map[string]*Metric
	fam     *serverfamily.Family // whose names the exposition used; nil: serverfamily.Default
}

// Family returns the server family whose names the snapshot was read with.
func (s *Snapshot) Family() *serverfamily.Family { return serverfamily.OrDefault(s.fam) }

// Rename records that a metric was found under a pre-V1 name.
type Rename struct {
	// Canonical is the V1 name the metric is known by here.
	Canonical string `json:"canonical"`
	// Found is the name in the exposition, with Prefix.
	Found string `json:"found"`
	// BothPresent is set when the exposition also had the V1 name; the V1
	// series were used and the old ones ignored.
	BothPresent bool `json:"both_present,omitempty"`
}

// Ignored is a metric family left out of a Snapshot.
type Ignored struct {
	Name   string `json:"name"`   // as exposed
	Reason string `json:"reason"` // why it was left out
}

// Reasons a family is ignored.
const (
	reasonNotVLLM    = "not a vLLM metric"
	reasonCreated    = "creation timestamp of a counter or histogram (_created)"
	reasonRemovedV0  = "V0-engine metric, removed in vLLM V1 (no V1 counterpart)"
	reasonSuperseded = "old name; the V1 name is also exposed and was used"
)

// Metric is one vLLM metric summed over its series.
type Metric struct {
	// Name is the canonical V1 name without Prefix.
	Name string
	// Found is the name in the exposition, with Prefix (differs from
	// Prefix+Name when vLLM exposed a pre-V1 name).
	Found string
	Kind  Kind
	Help  string
	// Value is the sum over all series (gauges, counters, untyped), except
	// for kv_cache_usage_perc, a ratio, where it is the highest engine's.
	Value float64
	// Parts breaks Value down by the labels other than engine and
	// model_name (finished_reason, reason, position, ...), summed over
	// engines and models; nil when there are no such labels.
	Parts []Part
	// Histogram is the bucket-wise sum over all series (histograms only).
	Histogram *Histogram
	// Info holds the labels of an info metric, without engine and
	// model_name (info metrics only).
	Info map[string]string
	// Series are the individual series, one per label set.
	Series []Series
}

// Part is a metric's value for one combination of breakdown labels.
type Part struct {
	Labels map[string]string
	Value  float64
}

// Series is one label set of a metric, as exposed.
type Series struct {
	Labels    map[string]string
	Value     float64    // gauges, counters, untyped, info
	Histogram *Histogram // histograms
	// At is the exposition's own timestamp of the sample (an exporter
	// that caches its values may say when it collected them); zero when
	// the line has none. Only ParseFamilies reads it.
	At time.Time
}

// By returns the metric's value summed by the values of one breakdown label,
// such as By("finished_reason") for request_success_total. ok is false when
// no series carries the label.
func (m *Metric) By(label string) (map[string]float64, bool) {
	out := map[string]float64{}
	found := false
	for _, p := range m.Parts {
		if v, ok := p.Labels[label]; ok {
			out[v] += p.Value
			found = true
		}
	}
	return out, found
}

// ErrNotAvailable matches (with errors.Is) every NotAvailableError.
var ErrNotAvailable = errors.New("metric not available")

// NotAvailableError says a metric cannot be read, by name, and why. Checks
// turn it into "not available", never into a pass or a zero.
type NotAvailableError struct {
	Metric string // canonical name
	Source string // the URL or file scraped
	Reason string

	fam *serverfamily.Family // whose prefix names the metric; nil: serverfamily.Default
}

func (e *NotAvailableError) Error() string {
	src := ""
	if e.Source != "" {
		src = " from " + e.Source
	}
	return fmt.Sprintf("metric %s is not available%s: %s", exposed(e.fam, e.Metric), src, e.Reason)
}

// Is makes errors.Is(err, ErrNotAvailable) true.
func (e *NotAvailableError) Is(target error) bool { return target == ErrNotAvailable }

// Names returns the canonical names of the metrics held, sorted.
func (s *Snapshot) Names() []string {
	return slices.Sorted(maps.Keys(s.metrics))
}

// Metric returns a metric by name: canonical, with its family's prefix, or
// under a name the family renamed.
func (s *Snapshot) Metric(name string) (*Metric, error) {
	c := s.Family().Canonical(name)
	if m, ok := s.metrics[c]; ok {
		return m, nil
	}
	return nil, &NotAvailableError{Metric: c, Source: s.Source, Reason: s.absence(c), fam: s.fam}
}

// absence explains why a metric is missing from the snapshot.
func (s *Snapshot) absence(canonical string) string {
	names := append([]string{exposed(s.fam, canonical)}, s.Family().OldNames(canonical)...)
	for _, ig := range s.Ignored {
		if slices.Contains(names, ig.Name) {
			return ig.Name + " was ignored: " + ig.Reason
		}
	}
	return "the exposition has no " + strings.Join(names, " or ") + " series"
}

// Gauge returns a gauge (or untyped sample) summed over its series.
func (s *Snapshot) Gauge(name string) (float64, error) {
	m, err := s.kind(name, KindGauge, KindUntyped)
	if err != nil {
		return 0, err
	}
	return m.Value, nil
}

// Counter returns a counter's value summed over its series: the total since
// the server started. For what happened during a run, use Diff.
func (s *Snapshot) Counter(name string) (float64, error) {
	m, err := s.kind(name, KindCounter)
	if err != nil {
		return 0, err
	}
	return m.Value, nil
}

// Histogram returns a histogram summed over its series (cumulative since the
// server started; Diff gives a run's own).
func (s *Snapshot) Histogram(name string) (*Histogram, error) {
	m, err := s.kind(name, KindHistogram)
	if err != nil {
		return nil, err
	}
	return m.Histogram, nil
}

// Info returns the labels of an info metric such as cache_config_info
// (block_size, num_gpu_blocks, enable_prefix_caching, ...).
func (s *Snapshot) Info(name string) (map[string]string, error) {
	m, err := s.kind(name, KindInfo)
	if err != nil {
		return nil, err
	}
	return maps.Clone(m.Info), nil
}

// kind returns the metric if it has one of the kinds.
func (s *Snapshot) kind(name string, kinds ...Kind) (*Metric, error) {
	m, err := s.Metric(name)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(kinds, m.Kind) {
		return nil, &NotAvailableError{Metric: m.Name, Source: s.Source, fam: s.fam,
			Reason: fmt.Sprintf("%s is a %s, not a %s", m.Found, m.Kind, kinds[0])}
	}
	return m, nil
}
