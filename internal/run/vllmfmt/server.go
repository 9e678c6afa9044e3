package vllmfmt

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/vllmperf/vllmperf/internal/target/scrape"
)

// WriteServer writes what the server's /metrics said about the run, after
// WriteText's block: counter deltas, server-side latency means and the
// sampler's peaks. A figure the server did not expose is written "n/a" with
// the metric's name, and a scrape that failed is said first.
func WriteServer(w io.Writer, d *scrape.Delta, ts *scrape.TimeSeries, scrapeErr error) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, centered(" Server (/metrics) ", '-'))
	line := func(label, value string) { fmt.Fprintf(bw, "%-40s %s\n", label, value) }
	if scrapeErr != nil {
		line("Scrape:", "FAILED: "+oneLine(scrapeErr.Error()))
	}
	counter := func(label, name string) {
		if d == nil {
			return
		}
		v, err := d.Counter(name)
		if err != nil {
			line(label, "n/a ("+name+")")
			return
		}
		line(label, fmt.Sprintf("%.0f", v))
	}
	counter("Δ prompt tokens:", scrape.PromptTokensTotal)
	counter("Δ generation tokens:", scrape.GenerationTokensTotal)
	counter("Δ requests finished:", scrape.RequestSuccessTotal)
	counter("Δ preemptions:", scrape.NumPreemptionsTotal)
	if d != nil {
		hits, errH := d.Counter(scrape.PrefixCacheHitsTotal)
		q, errQ := d.Counter(scrape.PrefixCacheQueriesTotal)
		switch {
		case errH != nil || errQ != nil:
			line("Prefix cache hit rate:", "n/a (prefix_cache_hits_total, prefix_cache_queries_total)")
		case q == 0:
			line("Prefix cache hit rate:", "no queries")
		default:
			line("Prefix cache hit rate (%):", fmt.Sprintf("%.2f", 100*hits/q))
		}
		for _, h := range []struct{ label, name string }{
			{"Server mean TTFT (ms):", scrape.TimeToFirstTokenSeconds},
			{"Server mean ITL (ms):", scrape.InterTokenLatencySeconds},
			{"Server mean queue time (ms):", scrape.RequestQueueTimeSeconds},
		} {
			hist, err := d.Histogram(h.name)
			if err != nil {
				line(h.label, "n/a ("+h.name+")")
				continue
			}
			if m, err := hist.Mean(); err == nil {
				line(h.label, fmt.Sprintf("%.2f", 1000*m))
			} else {
				line(h.label, "no observations")
			}
		}
	}
	if ts != nil {
		peak := func(label, name string, get func() (float64, error), scale float64) {
			if v, err := get(); err == nil {
				line(label, fmt.Sprintf("%.2f", scale*v))
			} else {
				line(label, "n/a ("+name+")")
			}
		}
		line("Sampler points:", fmt.Sprintf("%d every %s", len(ts.Points), ts.Interval))
		peak("Peak running requests:", scrape.NumRequestsRunning, ts.PeakRunning, 1)
		peak("Peak waiting requests:", scrape.NumRequestsWaiting, ts.PeakWaiting, 1)
		peak("Peak KV-cache usage (%):", scrape.KVCacheUsagePerc, ts.PeakKVUsage, 100)
		peak("Window tokens/s CV (%):", scrape.GenerationTokensTotal, ts.Jitter, 100)
	}
	fmt.Fprintln(bw, strings.Repeat("=", textWidth))
	return bw.Flush()
}

// centered centres title in textWidth as Python's "{:^50}" does: the odd
// fill goes right.
// Header is a section header as vllm bench serve prints one: title
// centred in fill to the summary's width.
func Header(title string, fill byte) string { return centered(title, fill) }

func centered(title string, fill byte) string {
	pad := textWidth - len(title)
	left := max(pad/2, 0)
	return strings.Repeat(string(fill), left) + title + strings.Repeat(string(fill), max(pad-left, 0))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
