package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/vllmperf/vllmperf/cmd/vllmperf/internal/cliflags"
	"github.com/vllmperf/vllmperf/internal/target/scrape/scrapefmt"
)

func newScrapeCommand(stdout io.Writer) *cobra.Command {
	o := &cliflags.ScrapeFlags{}
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
			snap, err := o.Snapshot(cmd.Context())
			switch {
			case err != nil:
				return err
			case o.JSON:
				return scrapefmt.WriteJSON(stdout, snap)
			}
			return scrapefmt.WriteTable(stdout, snap)
		},
	}
	cliflags.Scrape(cmd.Flags(), o)
	return cmd
}
