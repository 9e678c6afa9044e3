package pipeline

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/vllmperf/vllmperf/internal/run/result"
	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/target/server"
)

// metricsSource is where Run reads srv's metrics (server.MetricsOf): the
// Prometheus that scrapes a fleet, a fleet's replicas summed, or the one
// server's /metrics; each kept to the measured model's series where the
// server labels them by model_name.
// Every source reads the names of srv's family (server.FamilyOf).
// label is the model_name the measured model's series carry.
func metricsSource(srv server.Server, o options, hc *http.Client) (src scrape.Source, label string) {
	m := server.MetricsOf(srv)
	fam := server.FamilyOf(srv)
	switch {
	case m.Prometheus != "":
		return scrape.NewPrometheus(m.Prometheus, m.Selector, scrape.WithPromModel(m.Model), scrape.WithPromFamily(fam)), m.Model
	case len(m.URLs) > 1:
		return scrape.NewFleet(m.URLs, scrape.WithAPIKey(o.apiKey), scrape.WithTimeout(o.scrapeTimeout), scrape.WithHTTPClient(hc), scrape.WithModel(m.Model), scrape.WithFamily(fam)), m.Model
	}
	url := srv.MetricsURL()
	if len(m.URLs) == 1 {
		url = m.URLs[0]
	}
	return scrape.NewScraper(url, scrape.WithAPIKey(o.apiKey), scrape.WithTimeout(o.scrapeTimeout), scrape.WithHTTPClient(hc), scrape.WithModel(m.Model), scrape.WithFamily(fam)), m.Model
}

// modelWarnings says when the server labels its series by model_name but
// none with the measured model's (label): every model's series were
// summed, other models' traffic with this run's.
func modelWarnings(snap *scrape.Snapshot, label string) []error {
	if snap == nil || label == "" || snap.Model != "" || len(snap.Models) == 0 {
		return nil
	}
	return []error{fmt.Errorf("metrics: no series is labelled model_name=%q (the model measured), so the series of %s were summed; the server's counters then include every one of those models' traffic",
		label, strings.Join(snap.Models, ", "))}
}

// severalServers replaces the run's delta with a *scrape.SeveralServersError
// when its scrapes of one URL reached different servers (a load balancer):
// their process start times came back after changing, or changed between
// the before and after snapshots and the URL still answers from another
// process. Neither is a restart, and no delta across servers is kept.
func severalServers(ctx context.Context, r *result.Result, src scrape.Source) {
	s, ok := src.(*scrape.Scraper)
	if !ok {
		return // a fleet's replicas are read one by one
	}
	if err := s.SeveralServers(); err != nil {
		r.Delta, r.ScrapeErr = nil, err
		return
	}
	if r.Before != nil && r.After != nil && r.ScrapeErr != nil {
		r.ScrapeErr = scrape.OneServer(ctx, s, r.Before, r.After, r.ScrapeErr, scrape.DefaultProbes)
	}
}
