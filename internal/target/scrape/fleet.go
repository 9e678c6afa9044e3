package scrape

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
)

// Fleet reads the /metrics of every replica of one deployment (the pods
// behind a load balancer) and sums them as one server: each series gets a
// LabelReplica label with its replica's URL, so that Diff subtracts each
// replica's counters from its own and judges a restart per replica
// (Snapshot.ProcessStarts). It is safe for concurrent use.
type Fleet struct {
	scrapers []*Scraper
	model    string
	fam      *serverfamily.Family
}

// NewFleet returns a source over the replicas' metrics URLs, each scraped
// with opts. A scrape fails when any replica fails: a sum without one of
// them would be wrong, never merely smaller.
func NewFleet(urls []string, opts ...Option) *Fleet {
	f := &Fleet{}
	for _, u := range urls {
		s := NewScraper(u, opts...)
		f.scrapers = append(f.scrapers, s)
		f.model, f.fam = s.model, s.fam
	}
	return f
}

// URLs returns the replicas' metrics URLs.
func (f *Fleet) URLs() []string {
	var out []string
	for _, s := range f.scrapers {
		out = append(out, s.URL())
	}
	return out
}

// page is one replica's exposition, parsed but not summed.
type page struct {
	fams map[string]*dto.MetricFamily
	at   time.Time
}

// Scrape reads every replica at once and sums them. Errors are the first
// replica's *FetchError or *ParseError, which names its URL.
func (f *Fleet) Scrape(ctx context.Context) (*Snapshot, error) {
	if len(f.scrapers) == 0 {
		return nil, fmt.Errorf("scrape a fleet: no replica URL given")
	}
	pages := make([]*page, len(f.scrapers))
	errs := make([]error, len(f.scrapers))
	var wg sync.WaitGroup
	for i, s := range f.scrapers {
		wg.Go(func() {
			pages[i], errs[i] = scrapeWith(ctx, s, func(r io.Reader, source string, at time.Time) (*page, error) {
				fams, err := textFamilies(r, source)
				return &page{fams: fams, at: at}, err
			})
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return f.merge(pages)
}

// merge labels each page's series with its replica and sums the pages.
func (f *Fleet) merge(pages []*page) (*Snapshot, error) {
	merged := map[string]*dto.MetricFamily{}
	var at time.Time
	var replicas []string
	for i, p := range pages {
		replica := f.scrapers[i].URL()
		replicas = append(replicas, replica)
		if p.at.After(at) {
			at = p.at // the sum is whole once the last page arrived
		}
		if err := addReplica(merged, p.fams, replica); err != nil {
			return nil, err
		}
	}
	snap, err := buildSnapshot(f.fam, merged, fleetSource(replicas), at, f.model)
	if err != nil {
		return nil, err
	}
	snap.Replicas = replicas
	return snap, nil
}

// addReplica adds fams to merged, each series labelled replica=replica.
// A family exposed with different types by two replicas cannot be summed.
func addReplica(merged, fams map[string]*dto.MetricFamily, replica string) error {
	for _, name := range slices.Sorted(maps.Keys(fams)) {
		mf := fams[name]
		m := merged[name]
		switch {
		case m == nil:
			m = &dto.MetricFamily{Name: mf.Name, Help: mf.Help, Type: mf.Type}
			merged[name] = m
		case m.GetType() != mf.GetType():
			return &ParseError{Source: replica, Msg: fmt.Sprintf("%s is a %s here but a %s on another replica: the replicas run different servers, so their metrics cannot be summed",
				name, strings.ToLower(mf.GetType().String()), strings.ToLower(m.GetType().String()))}
		}
		for _, s := range mf.GetMetric() {
			if _, ok := labelMap(s.GetLabel())[LabelReplica]; ok {
				return &ParseError{Source: replica, Msg: fmt.Sprintf("%s already has a %q label, which vllmperf adds to tell replicas apart", name, LabelReplica)}
			}
			// The page was parsed for this merge alone: label it in place.
			s.Label = append(s.Label, &dto.LabelPair{Name: ptr(LabelReplica), Value: ptr(replica)})
			m.Metric = append(m.Metric, s)
		}
	}
	return nil
}

func ptr(s string) *string { return &s }

// fleetSource names a fleet's snapshot in errors and reports.
func fleetSource(replicas []string) string {
	return fmt.Sprintf("%d replicas (%s)", len(replicas), strings.Join(replicas, ", "))
}

// SeveralServersError says that scrapes of one metrics URL reached
// different servers (a load balancer in front of replicas): their
// process start times differ from scrape to scrape, so no counter of one
// scrape can be compared with another's. It is not a restart.
type SeveralServersError struct {
	URL     string
	Starts  []float64 // the distinct process_start_time_seconds seen
	Scrapes int       // how many scrapes saw them
}

func (e *SeveralServersError) Error() string {
	starts := make([]string, len(e.Starts))
	for i, s := range e.Starts {
		starts[i] = fmt.Sprintf("%.0f", s)
	}
	return fmt.Sprintf("several servers answer at %s: %d scrapes saw %d process start times (%s), so its counters come from whichever replica the load balancer picked and a run's deltas cannot be taken; "+
		"pass each replica's metrics URL (--metrics-url, repeatable, or VLLMPERF_METRICS_URLS, comma-separated), or read the deployment through the Prometheus that scrapes it (--prometheus URL --prometheus-selector '{...}')",
		e.URL, e.Scrapes, len(e.Starts), strings.Join(starts, ", "))
}

// DefaultProbes is how many extra scrapes OneServer takes.
const DefaultProbes = 8

// OneServer tells a restart from several servers behind one URL. err is
// Diff's error between before and after, two scrapes of s. When it says
// process_start_time_seconds changed, OneServer scrapes s up to probes
// more times: a start time other than after's (before's again, or a
// third) means several servers answer there, a *SeveralServersError;
// otherwise, or for any other error, err is returned as it is.
func OneServer(ctx context.Context, s *Scraper, before, after *Snapshot, err error, probes int) error {
	var re *ResetError
	if !errors.As(err, &re) || !slices.ContainsFunc(re.Resets, func(r Reset) bool { return r.Metric == processStartTime }) {
		return err
	}
	seen := map[float64]bool{before.ProcessStart: true, after.ProcessStart: true}
	other := false
	n := 2
	for range probes {
		snap, serr := s.Scrape(ctx)
		if serr != nil {
			break
		}
		n++
		seen[snap.ProcessStart] = true
		if snap.ProcessStart != after.ProcessStart {
			other = true
		}
	}
	if !other {
		return err // every later scrape saw after's process: it restarted
	}
	return &SeveralServersError{URL: s.URL(), Starts: slices.Sorted(maps.Keys(seen)), Scrapes: n}
}

// startLog records the process start times a Scraper's scrapes saw, in
// order, one entry per change: A, B, A means two servers answer at one
// URL, where a restart reads A, B.
type startLog struct {
	mu      sync.Mutex
	changes []float64
	scrapes int
}

func (l *startLog) add(start float64) {
	if start == 0 {
		return // the server does not expose it
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.scrapes++
	if n := len(l.changes); n == 0 || l.changes[n-1] != start {
		l.changes = append(l.changes, start)
	}
}

// SeveralServers reports the scrapes so far that saw a process start time
// come back after another one: several servers answer at the URL, which
// no restart explains. nil when none did.
func (s *Scraper) SeveralServers() *SeveralServersError {
	s.starts.mu.Lock()
	defer s.starts.mu.Unlock()
	seen := map[float64]bool{}
	back := false
	for _, v := range s.starts.changes {
		back = back || seen[v]
		seen[v] = true
	}
	if !back {
		return nil
	}
	return &SeveralServersError{URL: s.url, Starts: slices.Sorted(maps.Keys(seen)), Scrapes: s.starts.scrapes}
}
