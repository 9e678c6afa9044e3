// Package scrape reads a vLLM server's Prometheus /metrics page and turns it
// into figures a check can trust.
//
// Parsing is prometheus/common/expfmt's text parser, never regular
// expressions. A Snapshot holds every vLLM metric under its canonical V1
// name without the "vllm:" prefix (num_requests_running,
// generation_tokens_total, time_to_first_token_seconds, ...):
//
//   - values are summed over the engine and model_name label sets (except
//     kv_cache_usage_perc, a ratio, which takes the fullest engine); other
//     labels (finished_reason, reason, position) are kept as a breakdown;
//   - samples without # TYPE lines are typed from the catalogue of vLLM
//     names, and untyped NAME_bucket/NAME_sum/NAME_count series are
//     reassembled into histograms;
//   - the prefix and the other names are the server family's (WithFamily,
//     package serverfamily; vLLM's by default);
//   - names vLLM renamed are mapped to the V1 ones (gpu_cache_usage_perc →
//     kv_cache_usage_perc, gpu_prefix_cache_queries/hits →
//     prefix_cache_queries/hits, time_per_output_token_seconds →
//     inter_token_latency_seconds); Snapshot.Renamed records the name found,
//     and when both appear the V1 one wins. V0-only names, _created
//     timestamps and non-vLLM families are listed in Snapshot.Ignored;
//   - info metrics (cache_config_info) give their labels as a map.
//
// Diff subtracts two snapshots of the same server counter by counter and
// histogram bucket by bucket; a counter that went down makes the whole Delta
// invalid (*ResetError names each series, with both values). A Delta's
// histograms give the server-side percentiles of the run (Quantile, with
// Prometheus's histogram_quantile interpolation) and exact means.
//
// A Scraper fetches a URL; its errors (*FetchError, *ParseError) name the
// URL, the HTTP status, the timeout, or the line and its text. A Sampler
// scrapes every DefaultInterval during load and records a TimeSeries.
//
// Every accessor takes a name and returns (value, error): a metric the
// server does not expose is a *NotAvailableError naming it, never a zero.
package scrape
