package scrape

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Delta is what the server's counters and histograms gained between two
// snapshots: a run's own share of the totals. Gauges are read from After.
type Delta struct {
	Before, After *Snapshot
	metrics       map[string]*Metric // counters and histograms; values are increases
	unavailable   map[string]string  // canonical name → why it has no delta
}

// Reset is a counter or histogram series that went down between two
// snapshots: the server restarted (or the series was recreated), so no
// increase can be computed across it.
type Reset struct {
	Metric string  `json:"metric"` // the name in the later exposition, with Prefix
	Series string  `json:"series"` // its labels, {engine="0",model_name="m"}
	Before float64 `json:"before"` // counter value, or histogram count
	After  float64 `json:"after"`
	Reason string  `json:"reason"`
}

func (r Reset) String() string {
	return fmt.Sprintf("%s%s %s (before %g, after %g)", r.Metric, r.Series, r.Reason, r.Before, r.After)
}

// ResetError reports the resets that make a Delta invalid.
type ResetError struct {
	Resets []Reset
}

func (e *ResetError) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "counter reset between scrapes (did the server restart?), so the run's deltas are invalid: ")
	for i, r := range e.Resets {
		if i == 3 {
			fmt.Fprintf(&sb, "; and %d more", len(e.Resets)-3)
			break
		}
		if i > 0 {
			sb.WriteString("; ")
		}
		sb.WriteString(r.String())
	}
	return sb.String()
}

// Diff computes the increase of every counter and histogram from before to
// after, series by series and bucket by bucket, then sums as Snapshot does.
// A series first seen in after counts from zero. Any series that went down
// (a counter, a histogram's count or one of its buckets), vanished, or
// changed its bucket bounds is a reset: Diff then returns a *ResetError
// listing every one and no Delta — a delta across a restart would be wrong,
// never merely negative.
func Diff(before, after *Snapshot) (*Delta, error) {
	if before == nil || after == nil {
		return nil, fmt.Errorf("diff needs two snapshots")
	}
	if after.ScrapedAt.Before(before.ScrapedAt) {
		return nil, fmt.Errorf("diff: the later snapshot (%s) was taken before the earlier one (%s)",
			after.ScrapedAt.Format(time.RFC3339Nano), before.ScrapedAt.Format(time.RFC3339Nano))
	}
	d := &Delta{Before: before, After: after, metrics: map[string]*Metric{}, unavailable: map[string]string{}}
	var resets []Reset
	names := map[string]bool{}
	for n := range before.metrics {
		names[n] = true
	}
	for n := range after.metrics {
		names[n] = true
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		b, a := before.metrics[name], after.metrics[name]
		if !accumulates(a) && !accumulates(b) {
			continue
		}
		m, rs := diffMetric(name, b, a)
		resets = append(resets, rs...)
		if m == nil {
			continue
		}
		if err := m.summarize(); err != nil {
			d.unavailable[name] = err.Error()
			continue
		}
		d.metrics[name] = m
	}
	resets = append(resets, restarts(before, after)...)
	if len(resets) > 0 {
		return nil, &ResetError{Resets: resets}
	}
	return d, nil
}

// restarts finds a restart that counters alone may hide (after a restart
// a counter can already have grown past its old value): a new process
// start time, or counters created anew.
func restarts(before, after *Snapshot) []Reset {
	var out []Reset
	if before.ProcessStarts != nil || after.ProcessStarts != nil {
		// A fleet: each replica has its own start time.
		for _, r := range slices.Sorted(maps.Keys(after.ProcessStarts)) {
			if b, a := before.ProcessStarts[r], after.ProcessStarts[r]; b > 0 && a > 0 && a != b {
				out = append(out, Reset{Metric: processStartTime, Series: signature(map[string]string{LabelReplica: r}), Before: b, After: a, Reason: "changed: this replica restarted between the two scrapes"})
			}
		}
	} else if b, a := before.ProcessStart, after.ProcessStart; b > 0 && a > 0 && a != b {
		out = append(out, Reset{Metric: processStartTime, Before: b, After: a, Reason: "changed: the server restarted between the two scrapes"})
	}
	for _, name := range slices.Sorted(maps.Keys(after.Created)) {
		if b, ok := before.Created[name]; ok && after.Created[name] > b {
			out = append(out, Reset{Metric: after.Family().Metrics.Prefix + name, Before: b, After: after.Created[name], Reason: "was created anew (its _created timestamp moved): the server restarted"})
		}
	}
	return out
}

// accumulates reports whether m only ever grows: counters and histograms.
func accumulates(m *Metric) bool {
	return m != nil && (m.Kind == KindCounter || m.Kind == KindHistogram)
}

// diffMetric subtracts b from a series by series. b or a may be nil.
func diffMetric(name string, b, a *Metric) (*Metric, []Reset) {
	if a == nil {
		var rs []Reset
		for _, s := range b.Series {
			rs = append(rs, Reset{Metric: b.Found, Series: signature(s.Labels), Before: seriesTotal(s),
				Reason: "disappeared from the exposition"})
		}
		return nil, rs
	}
	if b != nil && b.Kind != a.Kind {
		return nil, []Reset{{Metric: a.Found, Reason: fmt.Sprintf("changed from a %s to a %s", b.Kind, a.Kind)}}
	}
	prev := map[string]Series{}
	if b != nil {
		for _, s := range b.Series {
			prev[signature(s.Labels)] = s
		}
	}
	m := &Metric{Name: name, Found: a.Found, Kind: a.Kind, Help: a.Help}
	var resets []Reset
	for _, s := range a.Series {
		sig := signature(s.Labels)
		p, ok := prev[sig]
		delete(prev, sig)
		if !ok {
			m.Series = append(m.Series, s) // new series: counted from zero
			continue
		}
		ds, reason := subtract(s, p)
		if reason != "" {
			resets = append(resets, Reset{Metric: a.Found, Series: sig, Before: seriesTotal(p), After: seriesTotal(s), Reason: reason})
			continue
		}
		m.Series = append(m.Series, ds)
	}
	for _, sig := range slices.Sorted(maps.Keys(prev)) {
		resets = append(resets, Reset{Metric: b.Found, Series: sig, Before: seriesTotal(prev[sig]),
			Reason: "disappeared from the exposition"})
	}
	return m, resets
}

// subtract returns s − p, or the reason it cannot be taken.
func subtract(s, p Series) (Series, string) {
	out := Series{Labels: s.Labels}
	if s.Histogram == nil {
		if s.Value < p.Value {
			return out, "went down"
		}
		out.Value = s.Value - p.Value
		return out, ""
	}
	h, ph := s.Histogram, p.Histogram
	if !sameBounds(h, ph) {
		return out, "changed its bucket bounds"
	}
	if h.Count < ph.Count {
		return out, "histogram count went down"
	}
	dh := h.clone()
	for i := range dh.Buckets {
		if h.Buckets[i].Count < ph.Buckets[i].Count {
			return out, fmt.Sprintf("bucket le=%q went down", FormatBound(h.Buckets[i].UpperBound))
		}
		dh.Buckets[i].Count -= ph.Buckets[i].Count
	}
	dh.Count -= ph.Count
	dh.Sum -= ph.Sum
	out.Histogram = dh
	return out, ""
}

// seriesTotal is what a reset reports: a counter's value or a histogram's
// count.
func seriesTotal(s Series) float64 {
	if s.Histogram != nil {
		return s.Histogram.Count
	}
	return s.Value
}

// Elapsed is the time between the two scrapes.
func (d *Delta) Elapsed() time.Duration { return d.After.ScrapedAt.Sub(d.Before.ScrapedAt) }

// Names returns the canonical names of the counters and histograms held.
func (d *Delta) Names() []string { return slices.Sorted(maps.Keys(d.metrics)) }

// Metric returns the increase of a counter or histogram by name (canonical,
// with Prefix, or pre-V1): Value, Parts, Histogram and Series are increases.
func (d *Delta) Metric(name string) (*Metric, error) {
	c := d.After.Family().Canonical(name)
	if m, ok := d.metrics[c]; ok {
		return m, nil
	}
	reason, ok := d.unavailable[c]
	switch {
	case ok:
	case d.After.metrics[c] != nil:
		reason = fmt.Sprintf("%s is a %s; deltas exist for counters and histograms (read gauges from Delta.After)", d.After.metrics[c].Found, d.After.metrics[c].Kind)
	default:
		reason = d.After.absence(c)
	}
	return nil, &NotAvailableError{Metric: c, Source: d.After.Source, Reason: reason, fam: d.After.fam}
}

// Counter returns a counter's increase, summed over its series.
func (d *Delta) Counter(name string) (float64, error) {
	m, err := d.kind(name, KindCounter)
	if err != nil {
		return 0, err
	}
	return m.Value, nil
}

// CounterBy returns a counter's increase by the values of one breakdown
// label, such as CounterBy("request_success_total", "finished_reason").
func (d *Delta) CounterBy(name, label string) (map[string]float64, error) {
	m, err := d.kind(name, KindCounter)
	if err != nil {
		return nil, err
	}
	by, ok := m.By(label)
	if !ok {
		return nil, &NotAvailableError{Metric: m.Name, Source: d.After.Source, Reason: fmt.Sprintf("%s has no %s label", m.Found, label), fam: d.After.fam}
	}
	return by, nil
}

// Rate returns a counter's increase per second of Elapsed.
func (d *Delta) Rate(name string) (float64, error) {
	v, err := d.Counter(name)
	if err != nil {
		return 0, err
	}
	secs := d.Elapsed().Seconds()
	if secs <= 0 {
		return 0, fmt.Errorf("rate of %s: the snapshots were taken at the same instant", exposed(d.After.fam, d.After.Family().Canonical(name)))
	}
	return v / secs, nil
}

// Histogram returns a histogram's increase, bucket-wise, summed over its
// series: the observations made between the two scrapes. Its Quantile and
// Mean are the server-side percentiles and mean of the run.
func (d *Delta) Histogram(name string) (*Histogram, error) {
	m, err := d.kind(name, KindHistogram)
	if err != nil {
		return nil, err
	}
	return m.Histogram, nil
}

func (d *Delta) kind(name string, k Kind) (*Metric, error) {
	m, err := d.Metric(name)
	if err != nil {
		return nil, err
	}
	if m.Kind != k {
		return nil, &NotAvailableError{Metric: m.Name, Source: d.After.Source, fam: d.After.fam,
			Reason: fmt.Sprintf("%s is a %s, not a %s", m.Found, m.Kind, k)}
	}
	return m, nil
}
