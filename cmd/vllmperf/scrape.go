package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/vllmperf/vllmperf/internal/harness/scrape"
)

// scrapeOptions are the flags of `vllmperf scrape`.
type scrapeOptions struct {
	url       string
	file      string
	json      bool
	apiKeyEnv string
	timeout   time.Duration
}

func newScrapeCommand(stdout io.Writer) *cobra.Command {
	o := &scrapeOptions{}
	cmd := &cobra.Command{
		Use:   "scrape (--url URL | --file FILE)",
		Short: "Read a vLLM server's Prometheus /metrics and print the parsed metrics",
		Long: `Scrape reads a /metrics exposition from a running server (--url) or a saved
file (--file) and prints every vLLM metric under its V1 name without the
vllm: prefix, summed over the engine and model_name labels (the KV-cache
usage ratio shows the fullest engine). Names from vLLM 0.9-0.12
(gpu_cache_usage_perc, gpu_prefix_cache_*, time_per_output_token_seconds)
are shown under their V1 names; the output says which name was found.

Histograms show count, sum, mean and the p50/p90/p99 interpolated the way
Prometheus's histogram_quantile does, cumulative since the server started.
With --json, histograms are {count, sum, buckets}.`,
		Example: `  vllmperf scrape --url http://127.0.0.1:8000/metrics
  vllmperf scrape --url http://127.0.0.1:8000 --json | jq .kv_cache_usage_perc
  curl -s http://127.0.0.1:8000/metrics > m.prom && vllmperf scrape --file m.prom`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unexpected argument %q: give the source as --url URL or --file FILE", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), stdout)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.url, "url", "", "metrics URL of a running server (a bare http://HOST:PORT gets /metrics)")
	f.StringVar(&o.file, "file", "", "a saved exposition (curl -s URL/metrics > FILE)")
	f.BoolVar(&o.json, "json", false, "print JSON keyed by V1 metric names instead of a table")
	f.StringVar(&o.apiKeyEnv, "api-key-env", "", "environment variable holding a bearer key for --url (vLLM's --api-key does not guard /metrics; a proxy may)")
	f.DurationVar(&o.timeout, "timeout", scrape.DefaultTimeout, "deadline of the scrape")
	return cmd
}

// source checks the flags and returns the snapshot they point at.
func (o *scrapeOptions) snapshot(ctx context.Context) (*scrape.Snapshot, error) {
	switch {
	case o.url == "" && o.file == "":
		return nil, usagef("say what to read: --url URL (a running server's /metrics) or --file FILE (a saved exposition)")
	case o.url != "" && o.file != "":
		return nil, usagef("--url and --file exclude each other: give one")
	case o.file != "" && o.apiKeyEnv != "":
		return nil, usagef("--api-key-env goes with --url; a file needs no key")
	case o.timeout <= 0:
		return nil, usagef("--timeout %v: want a positive duration such as 10s", o.timeout)
	}
	if o.file != "" {
		return scrape.ParseFile(o.file)
	}
	u, err := metricsURL(o.url)
	if err != nil {
		return nil, err
	}
	opts := []scrape.Option{scrape.WithTimeout(o.timeout)}
	if o.apiKeyEnv != "" {
		key := os.Getenv(o.apiKeyEnv)
		if key == "" {
			return nil, usagef("--api-key-env %s: that variable is empty or unset; export it, or drop the flag", o.apiKeyEnv)
		}
		opts = append(opts, scrape.WithAPIKey(key))
	}
	return scrape.NewScraper(u, opts...).Scrape(ctx)
}

// metricsURL checks --url and adds /metrics to a bare server address.
func metricsURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", usagef("--url %q: want http://HOST:PORT/metrics, e.g. http://127.0.0.1:8000/metrics", raw)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/metrics"
	}
	return u.String(), nil
}

func (o *scrapeOptions) run(ctx context.Context, stdout io.Writer) error {
	snap, err := o.snapshot(ctx)
	if err != nil {
		return err
	}
	if o.json {
		return writeScrapeJSON(stdout, snap)
	}
	return writeScrapeTable(stdout, snap)
}

// scrapeMeta is the "scrape" object of the JSON output: where the numbers
// come from and what was renamed or left out.
type scrapeMeta struct {
	Source     string           `json:"source"`
	ScrapedAt  time.Time        `json:"scraped_at"`
	Engines    []string         `json:"engines"`
	ModelNames []string         `json:"model_names"`
	Renamed    []scrape.Rename  `json:"renamed,omitempty"`
	Ignored    []scrape.Ignored `json:"ignored,omitempty"`
	Warnings   []string         `json:"warnings,omitempty"`
}

// writeScrapeJSON prints one object: every metric under its V1 name (a
// number; {count, sum, buckets} for histograms; the labels for info
// metrics), "by_label" with the breakdowns, and "scrape" with the metadata.
func writeScrapeJSON(w io.Writer, snap *scrape.Snapshot) error {
	out := map[string]any{}
	byLabel := map[string]map[string]map[string]float64{}
	for _, name := range snap.Names() {
		m, _ := snap.Metric(name)
		switch m.Kind {
		case scrape.KindHistogram:
			out[name] = m.Histogram // {count, sum, buckets}
		case scrape.KindInfo:
			out[name] = m.Info
		default:
			out[name] = jsonNumber(m.Value)
		}
		if by := breakdowns(m); len(by) > 0 {
			byLabel[name] = by
		}
	}
	out["by_label"] = byLabel
	out["scrape"] = scrapeMeta{
		Source: snap.Source, ScrapedAt: snap.ScrapedAt.UTC(), Engines: nonNil(snap.Engines), ModelNames: nonNil(snap.Models),
		Renamed: snap.Renamed, Ignored: snap.Ignored, Warnings: snap.Warnings,
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// jsonNumber keeps NaN and ±Inf (legal in the exposition, not in JSON) as
// the exposition spells them.
func jsonNumber(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return scrape.FormatBound(v)
	}
	return v
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// breakdowns returns a metric's values by each of its breakdown labels.
func breakdowns(m *scrape.Metric) map[string]map[string]float64 {
	labels := map[string]bool{}
	for _, p := range m.Parts {
		for k := range p.Labels {
			labels[k] = true
		}
	}
	out := map[string]map[string]float64{}
	for l := range labels {
		out[l], _ = m.By(l)
	}
	return out
}

// writeScrapeTable prints the snapshot for a person: header, then gauges,
// counters, histograms and info metrics, then what was renamed or ignored.
func writeScrapeTable(w io.Writer, snap *scrape.Snapshot) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "source\t%s\n", snap.Source)
	fmt.Fprintf(tw, "scraped at\t%s\n", snap.ScrapedAt.UTC().Format(time.RFC3339))
	fmt.Fprintf(tw, "engines\t%s\n", listOrNone(snap.Engines))
	fmt.Fprintf(tw, "model names\t%s\n", listOrNone(snap.Models))
	if err := tw.Flush(); err != nil {
		return err
	}

	byKind := map[scrape.Kind][]*scrape.Metric{}
	for _, name := range snap.Names() {
		m, _ := snap.Metric(name)
		byKind[m.Kind] = append(byKind[m.Kind], m)
	}
	for _, k := range []scrape.Kind{scrape.KindGauge, scrape.KindCounter, scrape.KindUntyped} {
		if len(byKind[k]) == 0 {
			continue
		}
		fmt.Fprintf(tw, "\n%s\tVALUE\n", strings.ToUpper(string(k)))
		for _, m := range byKind[k] {
			if by := breakdownText(m); by != "" {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", displayName(m), human(m.Value), by)
			} else {
				fmt.Fprintf(tw, "%s\t%s\n", displayName(m), human(m.Value))
			}
		}
	}
	if hs := byKind[scrape.KindHistogram]; len(hs) > 0 {
		fmt.Fprintf(tw, "\nHISTOGRAM (since server start)\tCOUNT\tSUM\tMEAN\tP50\tP90\tP99\n")
		for _, m := range hs {
			h := m.Histogram
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", displayName(m), human(h.Count), human(h.Sum),
				orDash(h.Mean()), orDash(h.Quantile(0.5)), orDash(h.Quantile(0.9)), orDash(h.Quantile(0.99)))
		}
	}
	if infos := byKind[scrape.KindInfo]; len(infos) > 0 {
		fmt.Fprintf(tw, "\nINFO\tLABELS\n")
		for _, m := range infos {
			var kv []string
			for _, k := range slices.Sorted(maps.Keys(m.Info)) {
				kv = append(kv, k+"="+m.Info[k])
			}
			fmt.Fprintf(tw, "%s\t%s\n", displayName(m), strings.Join(kv, " "))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeScrapeNotes(w, snap)
}

// writeScrapeNotes lists renames, ignored families (by reason) and warnings.
func writeScrapeNotes(w io.Writer, snap *scrape.Snapshot) error {
	if len(snap.Renamed) == 0 && len(snap.Ignored) == 0 && len(snap.Warnings) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	for _, r := range snap.Renamed {
		if r.BothPresent {
			fmt.Fprintf(w, "renamed: %s is also exposed under its old name %s (the V1 series were used)\n", r.Canonical, r.Found)
		} else {
			fmt.Fprintf(w, "renamed: * %s was found under its old name %s\n", r.Canonical, r.Found)
		}
	}
	byReason := map[string][]string{}
	for _, ig := range snap.Ignored {
		byReason[ig.Reason] = append(byReason[ig.Reason], ig.Name)
	}
	for _, reason := range slices.Sorted(maps.Keys(byReason)) {
		names := byReason[reason]
		shown := names[:min(len(names), 4)]
		more := ""
		if len(names) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(names)-len(shown))
		}
		fmt.Fprintf(w, "ignored (%s): %s%s\n", reason, strings.Join(shown, ", "), more)
	}
	for _, warn := range snap.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	return nil
}

// displayName is the V1 name, marked when the exposition used another.
func displayName(m *scrape.Metric) string {
	if m.Found != scrape.Prefix+m.Name {
		return m.Name + " *"
	}
	return m.Name
}

func breakdownText(m *scrape.Metric) string {
	by := breakdowns(m)
	var parts []string
	for _, label := range slices.Sorted(maps.Keys(by)) {
		var kv []string
		for _, v := range slices.Sorted(maps.Keys(by[label])) {
			kv = append(kv, v+"="+human(by[label][v]))
		}
		parts = append(parts, label+": "+strings.Join(kv, " "))
	}
	return strings.Join(parts, "; ")
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "(no label)"
	}
	return strings.Join(s, ", ")
}

// orDash prints a figure, or "-" when it cannot be computed (no
// observations).
func orDash(v float64, err error) string {
	if err != nil {
		return "-"
	}
	return human(v)
}

// human prints a number compactly: integers whole, others with about four
// significant digits.
func human(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return scrape.FormatBound(v)
	case v == math.Trunc(v) && a < 1e15:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	default:
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
}
