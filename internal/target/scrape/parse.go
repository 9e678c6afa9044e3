package scrape

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
	"github.com/vllmperf/vllmperf/internal/vllmsim/simpace"
)

// MaxExpositionBytes bounds the exposition Parse reads. vLLM's is about
// 50 KiB; anything near this limit is not a vLLM /metrics page.
const MaxExpositionBytes = 32 << 20

// ParseError is an exposition that is not valid Prometheus text format. It
// names the source, the line and the line's text.
type ParseError struct {
	Source string
	Line   int    // 1-based; 0 when the problem is not on one line
	Text   string // the offending line, as exposed (cut at 200 bytes)
	Msg    string
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("parse %s: %s", e.Source, e.Msg)
	}
	if e.Text == "" {
		return fmt.Sprintf("parse %s: line %d: %s", e.Source, e.Line, e.Msg)
	}
	return fmt.Sprintf("parse %s: line %d: %s: %q", e.Source, e.Line, e.Msg, e.Text)
}

// ParseFile reads an exposition saved to a file (curl -s URL/metrics > f).
// Its ScrapedAt is the file's modification time.
func ParseFile(path string) (*Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return Parse(f, path, st.ModTime())
}

// Parse reads a Prometheus text exposition (format 0.0.4, with or without
// # TYPE lines) from r into a Snapshot. source names r in errors; at is the
// scrape time. Only vLLM families (serverfamily.VLLM's prefix) and the
// simulator's pace series (package simpace, under their own names) are
// kept; the others are listed in Snapshot.Ignored.
func Parse(r io.Reader, source string, at time.Time) (*Snapshot, error) {
	return parseModel(nil, r, source, at, "")
}

// ParseFor is Parse for a server of family fam: its prefix and its names
// (nil: serverfamily.Default).
func ParseFor(fam *serverfamily.Family, r io.Reader, source string, at time.Time) (*Snapshot, error) {
	return parseModel(fam, r, source, at, "")
}

// parseModel is ParseFor keeping only model's series where the exposition
// labels them by model_name (model "": every model's).
func parseModel(fam *serverfamily.Family, r io.Reader, source string, at time.Time, model string) (*Snapshot, error) {
	fams, err := textFamilies(r, source)
	if err != nil {
		return nil, err
	}
	return buildSnapshot(fam, fams, source, at, model)
}

// buildSnapshot turns parsed families of a server of family fam (nil:
// serverfamily.Default) into a Snapshot, keeping model's series only
// (filterModel).
func buildSnapshot(fam *serverfamily.Family, fams map[string]*dto.MetricFamily, source string, at time.Time, model string) (*Snapshot, error) {
	fam = serverfamily.OrDefault(fam)
	b := &builder{snap: &Snapshot{Source: source, ScrapedAt: at, metrics: map[string]*Metric{}, fam: fam}, fams: fams, model: model, fam: fam}
	if err := b.build(); err != nil {
		return nil, err
	}
	return b.snap, nil
}

// Families is an exposition of any exporter: every family's series by
// the name it is exposed under (ParseFamilies).
type Families struct {
	Source    string
	ScrapedAt time.Time
	Series    map[string][]Series
}

// ParseFamilies reads an exposition in the text format without vLLM's
// catalogue: every gauge, counter and untyped family, by exposed name
// (histograms and summaries are left out).
func ParseFamilies(r io.Reader, source string, at time.Time) (*Families, error) {
	fams, err := textFamilies(r, source)
	if err != nil {
		return nil, err
	}
	out := &Families{Source: source, ScrapedAt: at, Series: map[string][]Series{}}
	for name, mf := range fams {
		switch mf.GetType() {
		case dto.MetricType_GAUGE, dto.MetricType_COUNTER, dto.MetricType_UNTYPED:
		default:
			continue
		}
		for _, m := range mf.GetMetric() {
			s := Series{Labels: labelMap(m.GetLabel()), Value: sampleValue(m)}
			if m.TimestampMs != nil {
				s.At = time.UnixMilli(m.GetTimestampMs())
			}
			out.Series[name] = append(out.Series[name], s)
		}
	}
	return out, nil
}

// textFamilies reads the text format's families, with the checks every
// exposition gets (size, emptiness, a line that does not parse).
func textFamilies(r io.Reader, source string) (map[string]*dto.MetricFamily, error) {
	body, err := io.ReadAll(io.LimitReader(r, MaxExpositionBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", source, err)
	}
	if len(body) > MaxExpositionBytes {
		return nil, &ParseError{Source: source, Msg: fmt.Sprintf("exposition larger than %d MiB: not a vLLM /metrics page", MaxExpositionBytes>>20)}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, &ParseError{Source: source, Msg: "empty exposition: the endpoint answered no metrics"}
	}
	if body[len(body)-1] != '\n' {
		// The format ends every line with \n; a file saved without the
		// last one is still readable.
		body = append(body, '\n')
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, lineError(source, body, err)
	}
	return fams, nil
}

// lineError turns expfmt's error into a ParseError quoting the line.
func lineError(source string, body []byte, err error) error {
	var pe expfmt.ParseError
	if !errors.As(err, &pe) {
		return &ParseError{Source: source, Msg: err.Error()}
	}
	text := ""
	lines := bytes.Split(body, []byte("\n"))
	if pe.Line >= 1 && pe.Line <= len(lines) {
		text = string(lines[pe.Line-1])
		if len(text) > 200 {
			text = text[:200] + "..."
		}
	}
	return &ParseError{Source: source, Line: pe.Line, Text: text, Msg: pe.Msg}
}

// builder turns expfmt's families into a Snapshot.
type builder struct {
	fam     *serverfamily.Family // whose names the exposition uses
	snap    *Snapshot
	fams    map[string]*dto.MetricFamily
	model   string // keep only this model_name's series ("" all)
	engines map[string]bool
	models  map[string]bool
}

// family is one vLLM metric family, typed, ready to become a Metric.
type family struct {
	exposed   string // name in the exposition
	canonical string
	kind      Kind
	help      string
	series    []Series
}

func (b *builder) build() error {
	b.engines, b.models = map[string]bool{}, map[string]bool{}
	b.filterModel()
	reassembled := b.reassembleUntypedHistograms()
	var fams []*family
	b.restartMarks()
	for _, name := range slices.Sorted(maps.Keys(b.fams)) {
		mf := b.fams[name]
		if reason := b.ignoreReason(name, reassembled); reason != "" {
			b.snap.Ignored = append(b.snap.Ignored, Ignored{Name: name, Reason: reason})
			continue
		}
		f, err := b.family(mf)
		if err != nil {
			return err
		}
		if f != nil {
			fams = append(fams, f)
		}
	}
	fams = append(fams, reassembled...)
	for _, f := range b.dedupe(fams) {
		m, err := b.metric(f)
		if err != nil {
			return err
		}
		if m != nil {
			b.snap.metrics[m.Name] = m
		}
	}
	b.snap.Engines = slices.Sorted(maps.Keys(b.engines))
	b.snap.Models = slices.Sorted(maps.Keys(b.models))
	slices.SortFunc(b.snap.Ignored, func(x, y Ignored) int { return strings.Compare(x.Name, y.Name) })
	slices.SortFunc(b.snap.Renamed, func(x, y Rename) int { return strings.Compare(x.Canonical, y.Canonical) })
	return nil
}

// filterModel drops the vLLM series labelled with a model_name other
// than b.model, so that a server with several models is read for the one
// measured. Every model_name seen stays in Snapshot.Models. When no series
// carries b.model while others name models, nothing is dropped and a
// warning says what was summed (the label is vLLM's first
// --served-model-name; a request may use another alias).
func (b *builder) filterModel() {
	if b.model == "" {
		return
	}
	labelled := false
	for name, mf := range b.fams {
		if !strings.HasPrefix(name, b.fam.Metrics.Prefix) {
			continue
		}
		for _, m := range mf.GetMetric() {
			if v, ok := labelMap(m.GetLabel())[LabelModelName]; ok {
				b.models[v] = true
				labelled = true
			}
		}
	}
	if !labelled {
		return // the server does not label its series by model
	}
	if !b.models[b.model] {
		b.snap.Warnings = append(b.snap.Warnings, fmt.Sprintf("no series is labelled model_name=%q (the model measured); the series of %s were summed",
			b.model, strings.Join(slices.Sorted(maps.Keys(b.models)), ", ")))
		return
	}
	b.snap.Model = b.model
	for name, mf := range b.fams {
		if !strings.HasPrefix(name, b.fam.Metrics.Prefix) {
			continue
		}
		kept := mf.Metric[:0]
		for _, m := range mf.GetMetric() {
			if v, ok := labelMap(m.GetLabel())[LabelModelName]; !ok || v == b.model {
				kept = append(kept, m)
			}
		}
		mf.Metric = kept
		if len(kept) == 0 {
			delete(b.fams, name) // another model's only: absent, not zero
		}
	}
}

// processStartTime is the standard process collector's gauge, which real
// vLLM (Python's default registry) and vllm-sim expose.
const processStartTime = "process_start_time_seconds"

// restartMarks records what tells a restart from a counter that merely
// grew: the process start time and the _created timestamps.
func (b *builder) restartMarks() {
	if mf := b.fams[processStartTime]; mf != nil {
		for _, m := range mf.GetMetric() {
			v := sampleValue(m)
			b.snap.ProcessStart = max(b.snap.ProcessStart, v)
			if r, ok := labelMap(m.GetLabel())[LabelReplica]; ok {
				if b.snap.ProcessStarts == nil {
					b.snap.ProcessStarts = map[string]float64{}
				}
				b.snap.ProcessStarts[r] = max(b.snap.ProcessStarts[r], v)
			}
		}
	}
	for name, mf := range b.fams {
		base, ok := strings.CutSuffix(name, "_created")
		if !ok || !strings.HasPrefix(name, b.fam.Metrics.Prefix) {
			continue
		}
		canonical := b.fam.Canonical(base)
		if b.fams[base+"_total"] != nil {
			canonical = b.fam.Canonical(base + "_total")
		}
		for _, m := range mf.GetMetric() {
			if b.snap.Created == nil {
				b.snap.Created = map[string]float64{}
			}
			key := canonical
			if r, ok := labelMap(m.GetLabel())[LabelReplica]; ok {
				key += "{" + LabelReplica + "=" + strconv.Quote(r) + "}" // each replica restarts on its own
			}
			b.snap.Created[key] = max(b.snap.Created[key], sampleValue(m))
		}
	}
}

// sampleValue is a gauge's, a counter's or an untyped sample's value.
func sampleValue(m *dto.Metric) float64 {
	if g := m.GetGauge(); g != nil {
		return g.GetValue()
	}
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	return m.GetUntyped().GetValue()
}

// ignoreReason says why a family is left out, or "" to keep it.
func (b *builder) ignoreReason(name string, reassembled []*family) string {
	if !strings.HasPrefix(name, b.fam.Metrics.Prefix) && !simpace.Owned(name) {
		return reasonNotVLLM
	}
	short := strings.TrimPrefix(name, b.fam.Metrics.Prefix)
	if b.fam.IsRemoved(short) {
		return reasonRemovedV0
	}
	if base, ok := strings.CutSuffix(name, "_created"); ok {
		if mf := b.fams[base+"_total"]; mf != nil {
			return reasonCreated
		}
		if mf := b.fams[base]; mf != nil && mf.GetType() == dto.MetricType_HISTOGRAM {
			return reasonCreated
		}
		for _, f := range reassembled {
			if f.exposed == base {
				return reasonCreated
			}
		}
	}
	return ""
}

// family reads one typed or untyped family. Untyped histogram parts were
// taken out already (reassembleUntypedHistograms).
func (b *builder) family(mf *dto.MetricFamily) (*family, error) {
	name := mf.GetName()
	f := &family{exposed: name, canonical: b.fam.Canonical(name), help: mf.GetHelp()}
	switch mf.GetType() {
	case dto.MetricType_COUNTER:
		f.kind = KindCounter
		if !strings.HasSuffix(f.canonical, "_total") {
			// A client library that does not append _total.
			f.canonical = b.fam.Canonical(f.canonical + "_total")
		}
	case dto.MetricType_GAUGE:
		f.kind = KindGauge
		if kindByName(f.canonical) == KindInfo {
			f.kind = KindInfo
		}
	case dto.MetricType_UNTYPED:
		f.kind = kindByName(f.canonical)
		if f.kind == KindHistogram {
			// A known histogram name with a plain sample: not a histogram.
			f.kind = KindUntyped
		}
	case dto.MetricType_HISTOGRAM:
		f.kind = KindHistogram
	default:
		b.snap.Ignored = append(b.snap.Ignored, Ignored{Name: name,
			Reason: fmt.Sprintf("%s metrics are not read (vLLM exposes none)", strings.ToLower(mf.GetType().String()))})
		return nil, nil
	}
	for _, m := range mf.GetMetric() {
		s := Series{Labels: labelMap(m.GetLabel())}
		switch {
		case m.GetHistogram() != nil:
			h, err := fromDTO(name, m.GetHistogram(), b.snap)
			if err != nil {
				return nil, &ParseError{Source: b.snap.Source, Msg: err.Error()}
			}
			s.Histogram = h
		case m.GetCounter() != nil:
			s.Value = m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			s.Value = m.GetGauge().GetValue()
		case m.GetUntyped() != nil:
			s.Value = m.GetUntyped().GetValue()
		}
		f.series = append(f.series, s)
	}
	return f, nil
}

// fromDTO converts a parsed histogram, checking that it is whole.
func fromDTO(name string, d *dto.Histogram, snap *Snapshot) (*Histogram, error) {
	h := &Histogram{Sum: d.GetSampleSum(), Count: float64(d.GetSampleCount())}
	if d.SampleCountFloat != nil {
		h.Count = d.GetSampleCountFloat()
	}
	for _, bk := range d.GetBucket() {
		c := float64(bk.GetCumulativeCount())
		if bk.CumulativeCountFloat != nil {
			c = bk.GetCumulativeCountFloat()
		}
		h.Buckets = append(h.Buckets, Bucket{UpperBound: bk.GetUpperBound(), Count: c})
	}
	if d.SampleCount == nil && d.SampleCountFloat == nil {
		// No _count line: the +Inf bucket holds the count.
		for _, bk := range h.Buckets {
			if math.IsInf(bk.UpperBound, 1) {
				h.Count = bk.Count
			}
		}
	}
	return finishHistogram(name, h, snap)
}

// finishHistogram sorts the buckets and checks them: no duplicate bound, a
// +Inf bucket (added from _count when missing), and a +Inf count that
// agrees with _count (a warning when not).
func finishHistogram(name string, h *Histogram, snap *Snapshot) (*Histogram, error) {
	slices.SortFunc(h.Buckets, func(x, y Bucket) int { return cmpFloat(x.UpperBound, y.UpperBound) })
	for i := 1; i < len(h.Buckets); i++ {
		if h.Buckets[i].UpperBound == h.Buckets[i-1].UpperBound {
			return nil, fmt.Errorf("histogram %s: bucket le=%q appears twice", name, FormatBound(h.Buckets[i].UpperBound))
		}
	}
	n := len(h.Buckets)
	if n == 0 || !math.IsInf(h.Buckets[n-1].UpperBound, 1) {
		h.Buckets = append(h.Buckets, Bucket{UpperBound: math.Inf(1), Count: h.Count})
		snap.Warnings = append(snap.Warnings, fmt.Sprintf("histogram %s has no le=\"+Inf\" bucket; used its _count (%g)", name, h.Count))
	} else if inf := h.Buckets[n-1].Count; inf != h.Count {
		snap.Warnings = append(snap.Warnings, fmt.Sprintf("histogram %s: le=\"+Inf\" bucket holds %g observations but _count says %g", name, inf, h.Count))
	}
	return h, nil
}

// reassembleUntypedHistograms finds histograms exposed without a # TYPE
// line, as untyped NAME_bucket{le=...}, NAME_sum and NAME_count families,
// and takes them out of b.fams as histogram families.
func (b *builder) reassembleUntypedHistograms() []*family {
	var out []*family
	for _, name := range slices.Sorted(maps.Keys(b.fams)) {
		base, ok := strings.CutSuffix(name, "_bucket")
		if !ok || !strings.HasPrefix(name, b.fam.Metrics.Prefix) || !untypedWithLE(b.fams[name]) {
			continue
		}
		parts := untypedHistogramParts{}
		for _, m := range b.fams[name].GetMetric() {
			ls := labelMap(m.GetLabel())
			le, _ := parseBound(ls["le"]) // untypedWithLE checked it parses
			delete(ls, "le")
			p := parts.get(ls)
			p.h.Buckets = append(p.h.Buckets, Bucket{UpperBound: le, Count: m.GetUntyped().GetValue()})
		}
		for _, m := range b.untyped(base + "_sum") {
			parts.get(labelMap(m.GetLabel())).h.Sum = m.GetUntyped().GetValue()
		}
		for _, m := range b.untyped(base + "_count") {
			p := parts.get(labelMap(m.GetLabel()))
			p.h.Count, p.hasCount = m.GetUntyped().GetValue(), true
		}
		delete(b.fams, name)
		delete(b.fams, base+"_sum")
		delete(b.fams, base+"_count")
		if f := b.histogramFamily(base, parts); f != nil {
			out = append(out, f)
		}
	}
	return out
}

// untypedHistogramPart is one label set of a reassembled histogram.
type untypedHistogramPart struct {
	labels   map[string]string
	h        Histogram
	hasCount bool
}

// untypedHistogramParts collects the parts by label signature (without le).
type untypedHistogramParts map[string]*untypedHistogramPart

func (ps untypedHistogramParts) get(labels map[string]string) *untypedHistogramPart {
	key := signature(labels)
	if ps[key] == nil {
		ps[key] = &untypedHistogramPart{labels: labels}
	}
	return ps[key]
}

// histogramFamily checks the reassembled parts; a broken one is ignored
// with the reason.
func (b *builder) histogramFamily(base string, parts untypedHistogramParts) *family {
	f := &family{exposed: base, canonical: b.fam.Canonical(base), kind: KindHistogram}
	for _, key := range slices.Sorted(maps.Keys(parts)) {
		p := parts[key]
		if !p.hasCount {
			// No _count series: the +Inf bucket holds the count.
			for _, bk := range p.h.Buckets {
				if math.IsInf(bk.UpperBound, 1) {
					p.h.Count = bk.Count
				}
			}
		}
		h, err := finishHistogram(base, &p.h, b.snap)
		if err != nil {
			b.snap.Ignored = append(b.snap.Ignored, Ignored{Name: base, Reason: err.Error()})
			return nil
		}
		f.series = append(f.series, Series{Labels: p.labels, Histogram: h})
	}
	return f
}

// untyped returns the samples of an untyped family, or nil.
func (b *builder) untyped(name string) []*dto.Metric {
	if mf := b.fams[name]; mf != nil && mf.GetType() == dto.MetricType_UNTYPED {
		return mf.GetMetric()
	}
	return nil
}

// untypedWithLE reports whether every sample of an untyped family has a
// valid le label: the _bucket part of a histogram.
func untypedWithLE(mf *dto.MetricFamily) bool {
	if mf.GetType() != dto.MetricType_UNTYPED || len(mf.GetMetric()) == 0 {
		return false
	}
	for _, m := range mf.GetMetric() {
		le, ok := labelMap(m.GetLabel())["le"]
		if !ok {
			return false
		}
		if _, err := parseBound(le); err != nil {
			return false
		}
	}
	return true
}

// parseBound reads an le label value ("0.5", "+Inf").
func parseBound(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) {
		return 0, fmt.Errorf("le=%q is not a number", s)
	}
	return f, nil
}

// labelMap turns label pairs into a map.
func labelMap(pairs []*dto.LabelPair) map[string]string {
	m := make(map[string]string, len(pairs))
	for _, p := range pairs {
		m[p.GetName()] = p.GetValue()
	}
	return m
}

// signature is a stable text form of a label set: {a="1",b="2"}.
func signature(labels map[string]string) string {
	var sb strings.Builder
	sb.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(labels)) {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "%s=%q", k, labels[k])
	}
	sb.WriteByte('}')
	return sb.String()
}

// dedupe keeps one family per canonical name. When a pre-V1 and the V1 name
// both appear, the V1 one wins; the other is listed in Ignored. Renamed
// records every family kept under an old name.
func (b *builder) dedupe(fams []*family) []*family {
	byName := map[string][]*family{}
	for _, f := range fams {
		byName[f.canonical] = append(byName[f.canonical], f)
	}
	var out []*family
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		group := byName[name]
		// The family exposed under the canonical name sorts first: the
		// prefixed one, or a family outside the prefix under its own name
		// (the simulator's vllmperf_sim_*), which is no rename.
		current := func(f *family) bool { return f.exposed == b.fam.Metrics.Prefix+name || f.exposed == name }
		slices.SortStableFunc(group, func(x, y *family) int { return cmpBool(!current(x), !current(y)) })
		kept := group[0]
		out = append(out, kept)
		if !current(kept) {
			b.snap.Renamed = append(b.snap.Renamed, Rename{Canonical: name, Found: kept.exposed})
		}
		for _, f := range group[1:] {
			b.snap.Renamed = append(b.snap.Renamed, Rename{Canonical: name, Found: f.exposed, BothPresent: true})
			b.snap.Ignored = append(b.snap.Ignored, Ignored{Name: f.exposed, Reason: reasonSuperseded + " (" + kept.exposed + ")"})
		}
	}
	return out
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// metric turns a family into a Metric. A family with duplicate series is
// an error (summing would count them twice); a histogram whose series
// disagree on bucket bounds is ignored with the reason.
func (b *builder) metric(f *family) (*Metric, error) {
	m := &Metric{Name: f.canonical, Found: f.exposed, Kind: f.kind, Help: f.help, Series: f.series}
	seen := map[string]bool{}
	for _, s := range f.series {
		sig := signature(s.Labels)
		if seen[sig] {
			return nil, &ParseError{Source: b.snap.Source, Msg: fmt.Sprintf("%s%s appears twice: an exposition holds each series once", f.exposed, sig)}
		}
		seen[sig] = true
		if e, ok := s.Labels[LabelEngine]; ok {
			b.engines[e] = true
		}
		if v, ok := s.Labels[LabelModelName]; ok {
			b.models[v] = true
		}
	}
	if err := m.summarize(); err != nil {
		b.snap.Ignored = append(b.snap.Ignored, Ignored{Name: f.exposed, Reason: err.Error()})
		return nil, nil
	}
	if m.Kind == KindInfo {
		m.Info = b.infoLabels(m)
	}
	return m, nil
}

// summarize sets Value, Parts and Histogram from Series: sums, except for
// the ratios in maxOverSeries.
func (m *Metric) summarize() error {
	m.Value, m.Parts, m.Histogram = 0, nil, nil
	if len(m.Series) == 0 {
		return nil
	}
	if m.Kind == KindHistogram {
		h, err := sumHistograms(m.Series)
		m.Histogram = h
		return err
	}
	if maxOverSeries[m.Name] {
		m.Value = m.Series[0].Value
		for _, s := range m.Series[1:] {
			m.Value = max(m.Value, s.Value)
		}
		return nil
	}
	parts := map[string]*Part{}
	for _, s := range m.Series {
		m.Value += s.Value
		rest := breakdownLabels(s.Labels)
		if len(rest) == 0 || m.Kind == KindInfo {
			// An info metric's labels are the information, not a breakdown.
			continue
		}
		key := signature(rest)
		if parts[key] == nil {
			parts[key] = &Part{Labels: rest}
		}
		parts[key].Value += s.Value
	}
	for _, key := range slices.Sorted(maps.Keys(parts)) {
		m.Parts = append(m.Parts, *parts[key])
	}
	return nil
}

// breakdownLabels returns the labels other than engine and model_name.
func breakdownLabels(labels map[string]string) map[string]string {
	rest := maps.Clone(labels)
	delete(rest, LabelEngine)
	delete(rest, LabelModelName)
	delete(rest, LabelReplica)
	return rest
}

// sumHistograms adds the series bucket-wise.
func sumHistograms(series []Series) (*Histogram, error) {
	sum := series[0].Histogram.clone()
	for _, s := range series[1:] {
		if !sameBounds(sum, s.Histogram) {
			return nil, fmt.Errorf("series have different bucket bounds (%s and %s), so they cannot be summed",
				signature(series[0].Labels), signature(s.Labels))
		}
		sum.add(s.Histogram)
	}
	return sum, nil
}

// infoLabels merges the labels of an info metric's series. Where engines
// disagree, the first series wins and a warning names the label.
func (b *builder) infoLabels(m *Metric) map[string]string {
	info := breakdownLabels(m.Series[0].Labels)
	for _, s := range m.Series[1:] {
		for k, v := range breakdownLabels(s.Labels) {
			if old, ok := info[k]; !ok {
				info[k] = v
			} else if old != v {
				b.snap.Warnings = append(b.snap.Warnings, fmt.Sprintf("%s: label %s is %q in %s but %q in %s; used the first",
					m.Found, k, old, signature(m.Series[0].Labels), v, signature(s.Labels)))
			}
		}
	}
	return info
}
