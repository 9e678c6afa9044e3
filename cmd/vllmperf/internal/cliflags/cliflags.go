// Package cliflags holds vllmperf's flags: their names, defaults and help
// texts, bound to the library packages' option structs, and the checks
// that depend on which flags were given (LoadFlags, ServerFlags, ...,
// one file per library), which turn them into the libraries' plain
// Config structs. No library package imports cobra or pflag, and none
// spells a flag (cmd/vllmperf's TestNoFlagTextInLibraries).
package cliflags

import (
	"fmt"
	"os"
	"strings"

	dockerunits "github.com/docker/go-units"
	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/internal/request/gateway"
	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/request/workload"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// Load defines vllmperf run's load-shape flags on f, with the CLI's
// defaults.
func Load(f *pflag.FlagSet, o *LoadFlags) {
	f.IntVar(&o.Config.Concurrency, "concurrency", 0, "closed loop: keep N requests in flight (N ≥ 1)")
	f.StringVar(&o.RateFlag, "rate", "", "open loop: requests per second (> 0), or \"inf\" to send all at once")
	f.Float64Var(&o.BurstinessFlag, "burstiness", load.DefaultBurstiness, "open loop: gamma shape of arrival gaps, > 0 (1: Poisson; <1 burstier; inf: constant rate)")
	f.IntVar(&o.Config.MaxConcurrency, "max-concurrency", 0, "open loop: cap on requests in flight (0: no cap); waiting on it is client queue time")
	f.IntVar(&o.Config.Requests, "requests", 0, "measured requests to send, ≥ 1 (warm-up comes on top)")
	f.DurationVar(&o.Config.Duration, "duration", 0, "stop dispatching this long after the measured phase starts (> 0)")
	f.DurationVar(&o.Config.Grace, "grace", load.DefaultGrace, "with --duration: how long in-flight requests may finish after the deadline (> 0)")
	f.IntVar(&o.Config.Warmup, "warmup", 1, "warm-up requests sent first, one at a time, excluded from the statistics (≥ 0; the cold first request is reported on its own)")
	f.Uint64Var(&o.Config.Seed, "seed", 0, "seed for prompt words and arrival times")
	f.IntVar(&o.Config.MaxConsecutiveFailures, "max-consecutive-failures", load.DefaultMaxConsecutiveFailures, "stop the run after this many requests in a row fail the same way (0: never stop early)")
}

// Request defines vllmperf run's request-shape flags on f, with the
// CLI's defaults.
func Request(f *pflag.FlagSet, o *RequestFlags) {
	f.IntVar(&o.PromptTokens, "prompt-tokens", workload.DefaultPromptTokens, fmt.Sprintf("prompt length in tokens, ≥ %d (one common English word per token)", workload.UniqueWords))
	f.IntVar(&o.SharedPrefixTokens, "shared-prefix-tokens", 0, fmt.Sprintf("length of a system prompt shared by every request (0: none, else ≥ %d; exercises the prefix cache)", workload.NonceWords))
	f.IntVar(&o.MaxTokens, "max-tokens", workload.DefaultMaxTokens, "completion tokens per request, ≥ 1 (sent with ignore_eos, so exactly this many; fewer are warned about)")
}

// Client defines vllmperf run's client flags on f, with the client's
// defaults.
func Client(f *pflag.FlagSet, o *ClientFlags) {
	f.StringVar(&o.APIKeyEnv, "api-key-env", "", "environment variable holding the API key (default "+openai.DefaultAPIKeyEnv+" when set); the key itself is never a flag")
	f.StringVar(&o.Endpoint, "endpoint", string(openai.Chat), "API to call: chat (/v1/chat/completions), completions (/v1/completions) or embeddings (/v1/embeddings) or rerank (/v1/rerank: a query and one document a request); these two are unstreamed, E2EL only. vllm bench serve's default backend calls completions; vllmperf keeps chat, the path chat clients take, so that stored baselines stay comparable: --endpoint completions matches vLLM")
	f.DurationVar(&o.RequestTimeout, "request-timeout", openai.DefaultRequestTimeout, "deadline of one whole request (0: none)")
	f.DurationVar(&o.IdleTimeout, "idle-timeout", openai.DefaultIdleTimeout, "longest silence allowed inside a stream before the request counts as timed out (0: none)")
	f.StringVar(&o.MaxEventSize, "max-event-size", dockerunits.BytesSize(openai.DefaultMaxEventSize), "largest SSE line accepted; a longer one fails the request as a protocol error (0: no cap, memory then grows with what the server sends)")
}

// gatewayLabels name the gateway flags in the library's errors.
var gatewayLabels = gateway.Labels{Headers: "--header", CACert: "--ca-cert", ClientCert: "--client-cert", ClientKey: "--client-key"}

// Gateway defines the gateway flags on f: how a running server is
// reached (headers, CA and client certificates).
func Gateway(f *pflag.FlagSet, o *gateway.Overrides) {
	o.From = gatewayLabels
	f.StringArrayVar(&o.Headers, "header", nil, "extra request header for a gateway, 'Name: value' (repeatable; 'Name: env:VAR' reads the value from $VAR); values are never printed (also "+gateway.EnvHeaders+", one a line)")
	f.StringVar(&o.CACert, "ca-cert", "", "PEM file of the CA that signed the server's TLS certificate, added to the system's roots (also "+gateway.EnvCACert+")")
	f.StringVar(&o.ClientCert, "client-cert", "", "PEM client certificate for a gateway that asks for one (mTLS), with --client-key (also "+gateway.EnvClientCert+")")
	f.StringVar(&o.ClientKey, "client-key", "", "PEM private key of --client-cert (also "+gateway.EnvClientKey+")")
}

// Output defines --format (one of formats, "text" by default) and
// --step-summary on f, for a gate command's report.
func Output(f *pflag.FlagSet, o *verdict.Output, formats []string) {
	o.Formats = formats
	f.StringVar(&o.Format, "format", "text", "report format on stdout: "+strings.Join(formats, ", "))
	f.StringVar(&o.StepSummary, "step-summary", os.Getenv(verdict.StepSummaryEnv), "append the markdown report to this file (default $"+verdict.StepSummaryEnv+", GitHub Actions' job summary; empty for none)")
}
