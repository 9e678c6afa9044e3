package main

import (
	"context"
	"io"
	"net/url"
	"os"
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
		return scrape.WriteJSON(stdout, snap)
	}
	return scrape.WriteTable(stdout, snap)
}
