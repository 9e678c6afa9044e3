package scrape

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"

	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
)

// DefaultFreshness bounds how long a Prometheus read waits for samples
// scraped after it began: a few scrape intervals of a usual 15 s.
const DefaultFreshness = time.Minute

// promPoll is how often a Prometheus read asks again for fresh samples.
const promPoll = 500 * time.Millisecond

// Prometheus reads a deployment's vLLM series through the Prometheus
// server that already scrapes it (the HTTP API's instant queries), for a
// fleet whose replicas cannot be reached one by one. Each Scrape waits
// until every replica's samples were scraped after the call began, so
// that a snapshot is never older than the moment it was asked for, as a
// direct scrape; the replica is the series' instance label (LabelReplica;
// instance and job are dropped). It is safe for concurrent use.
type Prometheus struct {
	api       promv1.API
	base      string
	matchers  string // the selector without its braces
	model     string
	fam       *serverfamily.Family
	freshness time.Duration
	err       error
}

// PromOption configures a Prometheus source.
type PromOption func(*Prometheus)

// WithFreshness bounds the wait for fresh samples (DefaultFreshness).
func WithFreshness(d time.Duration) PromOption { return func(p *Prometheus) { p.freshness = d } }

// WithPromModel keeps only model's series, as WithModel.
func WithPromModel(model string) PromOption { return func(p *Prometheus) { p.model = model } }

// WithPromFamily reads the series with fam's names, as WithFamily.
func WithPromFamily(fam *serverfamily.Family) PromOption { return func(p *Prometheus) { p.fam = fam } }

// WithPromHTTPClient queries through hc.
func WithPromHTTPClient(hc *http.Client) PromOption {
	return func(p *Prometheus) { p.err = p.newAPI(hc) }
}

// NewPrometheus returns a source over the Prometheus server at base (its
// root URL) for the series selector picks: label matchers in braces, such
// as {namespace="llm",service="vllm"}. A bad URL or selector does not
// panic: every Scrape fails with it.
func NewPrometheus(base, selector string, opts ...PromOption) *Prometheus {
	p := &Prometheus{base: strings.TrimSuffix(base, "/"), freshness: DefaultFreshness}
	sel := strings.TrimSpace(selector)
	inner, ok := strings.CutPrefix(sel, "{")
	if inner, ok2 := strings.CutSuffix(inner, "}"); ok && ok2 && strings.TrimSpace(inner) != "" {
		p.matchers = inner
	} else {
		p.err = fmt.Errorf("selector %q: want label matchers in braces that pick the deployment's series, e.g. {namespace=\"llm\",service=\"vllm\"}", selector)
	}
	if p.err == nil {
		p.err = p.newAPI(http.DefaultClient)
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func (p *Prometheus) newAPI(hc *http.Client) error {
	c, err := api.NewClient(api.Config{Address: p.base, Client: boundedClient(hc, MaxQueryBytes)})
	if err != nil {
		return fmt.Errorf("prometheus %q: %w", p.base, err)
	}
	p.api = promv1.NewAPI(c)
	return nil
}

// URL names the source: Prometheus's URL and the selector.
func (p *Prometheus) URL() string { return p.base + " {" + p.matchers + "}" }

// Scrape waits for samples scraped after it began, then reads every vLLM
// series and process_start_time_seconds the selector picks.
func (p *Prometheus) Scrape(ctx context.Context) (*Snapshot, error) {
	if p.err != nil {
		return nil, &FetchError{URL: p.URL(), Err: p.err}
	}
	begin := time.Now()
	deadline := begin.Add(p.freshness)
	for {
		oldest, n, err := p.oldest(ctx)
		switch {
		case err != nil:
			return nil, &FetchError{URL: p.URL(), Err: err}
		case n == 0:
			return nil, &FetchError{URL: p.URL(), Err: fmt.Errorf("no %s series matches the selector: check it against the deployment's labels in Prometheus", exposed(p.fam, NumRequestsRunning))}
		case !oldest.Before(begin):
			return p.read(ctx)
		case !time.Now().Before(deadline):
			return nil, &FetchError{URL: p.URL(), Err: fmt.Errorf("the oldest replica's samples are from %s, %s before the read began, and no fresher came within %s: is Prometheus still scraping every replica (its scrape interval)?",
				oldest.UTC().Format(time.RFC3339), begin.Sub(oldest).Round(time.Second), p.freshness)}
		}
		select {
		case <-ctx.Done():
			return nil, &FetchError{URL: p.URL(), Err: context.Cause(ctx)}
		case <-time.After(promPoll):
		}
	}
}

// oldest returns the time of the oldest replica's latest scrape (the
// timestamp of its num_requests_running sample) and how many replicas
// answered.
func (p *Prometheus) oldest(ctx context.Context) (time.Time, int, error) {
	v, err := p.query(ctx, fmt.Sprintf("timestamp(%s{%s})", exposed(p.fam, NumRequestsRunning), p.matchers))
	if err != nil {
		return time.Time{}, 0, err
	}
	var oldest time.Time
	for i, s := range v {
		t := time.Unix(0, int64(float64(s.Value)*float64(time.Second)))
		if i == 0 || t.Before(oldest) {
			oldest = t
		}
	}
	return oldest, len(v), nil
}

// read queries the series and builds the snapshot.
func (p *Prometheus) read(ctx context.Context) (*Snapshot, error) {
	at := time.Now()
	v, err := p.query(ctx, fmt.Sprintf(`{__name__=~"%s.+|%s",%s}`, serverfamily.OrDefault(p.fam).Metrics.Prefix, processStartTime, p.matchers))
	if err != nil {
		return nil, &FetchError{URL: p.URL(), Err: err}
	}
	fams, replicas, err := vectorFamilies(v, p.URL())
	if err != nil {
		return nil, err
	}
	snap, err := buildSnapshot(p.fam, fams, p.URL(), at, p.model)
	if err != nil {
		return nil, err
	}
	snap.Replicas = replicas
	return snap, nil
}

// query runs an instant query and wants a vector.
func (p *Prometheus) query(ctx context.Context, q string) (model.Vector, error) {
	res, _, _, err := p.api.Query(ctx, q, time.Now())
	if err != nil {
		var pe *promv1.Error
		if errors.As(err, &pe) && pe.Type == promv1.ErrBadData {
			return nil, fmt.Errorf("query %s: %w (check the selector's syntax)", q, err)
		}
		return nil, fmt.Errorf("query %s: %w", q, err)
	}
	v, ok := res.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("query %s answered a %s, not an instant vector", q, res.Type())
	}
	return v, nil
}

// targetLabels are the labels Prometheus puts on every series of a
// target; instance becomes LabelReplica, job is dropped.
var targetLabels = []string{model.InstanceLabel, model.JobLabel}

// vectorFamilies groups a vector's samples into untyped families by
// metric name, as an exposition without # TYPE lines reads (the
// catalogue types vLLM's names; _bucket series become histograms).
func vectorFamilies(v model.Vector, source string) (map[string]*dto.MetricFamily, []string, error) {
	fams := map[string]*dto.MetricFamily{}
	replicas := map[string]bool{}
	for _, s := range v {
		name := string(s.Metric[model.MetricNameLabel])
		replica := string(s.Metric[model.InstanceLabel])
		if replica == "" {
			return nil, nil, &ParseError{Source: source, Msg: fmt.Sprintf("%s has no instance label, which tells the replicas apart: keep it in the scrape job's relabelling", s.Metric)}
		}
		replicas[replica] = true
		f := fams[name]
		if f == nil {
			f = &dto.MetricFamily{Name: ptr(name), Type: dto.MetricType_UNTYPED.Enum()}
			fams[name] = f
		}
		m := &dto.Metric{Untyped: &dto.Untyped{Value: new(float64)}}
		*m.Untyped.Value = float64(s.Value)
		for _, k := range slices.Sorted(maps.Keys(s.Metric)) {
			if k == model.MetricNameLabel || slices.Contains(targetLabels, string(k)) {
				continue
			}
			m.Label = append(m.Label, &dto.LabelPair{Name: ptr(string(k)), Value: ptr(string(s.Metric[k]))})
		}
		m.Label = append(m.Label, &dto.LabelPair{Name: ptr(LabelReplica), Value: ptr(replica)})
		f.Metric = append(f.Metric, m)
	}
	return fams, slices.Sorted(maps.Keys(replicas)), nil
}
