package server

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
	"github.com/vllmperf/vllmperf/internal/vocab/setting"
)

// The environment variables of a fleet's metrics (docs/deployments.md;
// package envvar declares them).
var (
	envMetricsURLs        = envvar.MetricsURLs.Name
	envPrometheus         = envvar.Prometheus.Name
	envPrometheusSelector = envvar.PrometheusSelector.Name
)

// Metrics says where a deployment's vLLM series are read. A deployment
// behind a load balancer answers each scrape of its target's /metrics
// from whichever replica the balancer picks, so a run's before and after
// scrapes would compare different servers: its replicas are named one by
// one (URLs), or read through the Prometheus that already scrapes them.
type Metrics struct {
	// URLs are the /metrics URLs read and summed as one deployment: the
	// replicas', or the one server's MetricsURL.
	URLs []string
	// Prometheus is the base URL of a Prometheus server that scrapes the
	// deployment (http://prometheus:9090); "" when the series are read
	// from URLs.
	Prometheus string
	// Selector picks the deployment's series in Prometheus: label
	// matchers such as {namespace="llm",service="vllm"}.
	Selector string
	// Model is the model_name the server labels the measured model's
	// series with: the served model, or a LoRA adapter's base model (vLLM
	// labels an adapter's traffic with its base). "" when unknown.
	Model string
}

// Fleet reports whether the series come from more than one server.
func (m Metrics) Fleet() bool { return m.Prometheus != "" || len(m.URLs) > 1 }

// metricsReader is a Server whose metrics are read elsewhere than at its
// MetricsURL alone (an external deployment given replicas or Prometheus).
type metricsReader interface{ metrics() Metrics }

// MetricsOf says where srv's metrics are read: the replicas or the
// Prometheus it was reached with (WithMetricsURLs, WithPrometheus), else
// its own MetricsURL.
func MetricsOf(srv Server) Metrics {
	if r, ok := srv.(metricsReader); ok {
		return r.metrics()
	}
	return Metrics{URLs: []string{srv.MetricsURL()}, Model: srv.Model()}
}

// WithMetricsURLs reads an external deployment's metrics from each of
// urls (its replicas' /metrics; a URL without a path gets /metrics) and
// sums them, instead of from the target's /metrics.
func WithMetricsURLs(urls ...string) Option {
	return func(s *settings) { s.metrics.URLs = slices.Clone(urls) }
}

// WithPrometheus reads an external deployment's vLLM series through the
// Prometheus server at base, picked by selector (label matchers such as
// {namespace="llm",service="vllm"}).
func WithPrometheus(base, selector string) Option {
	return func(s *settings) { s.metrics.Prometheus, s.metrics.Selector = base, selector }
}

// fleetError is a settings error naming the fleet's settings by their
// fields (package setting): {MetricsURLs}, {Prometheus},
// {PrometheusSelector}, {Target}, each with a label for callers that
// give no flags (the suite reads the variables).
func fleetError(format string, a ...any) error {
	return settingsError{settingError(format, a...)}
}

// settingError words an error about server's settings (package setting).
var settingError = setting.Scope("server")

// checkMetrics checks the replicas' URLs and the Prometheus settings and
// puts /metrics on a URL without a path. Its errors wrap ErrSettings.
func (s *settings) checkMetrics() error {
	m := &s.metrics
	if len(m.URLs) == 0 && m.Prometheus == "" && m.Selector == "" {
		return nil
	}
	if s.backend != KindExternal {
		return fleetError("{MetricsURLs:replicas' metrics URLs} (%s) and {Prometheus:a Prometheus server} (%s) read a deployment that is already running; the %s backend starts its own server, whose /metrics is read: drop them, or pass {Target:a target (VLLMPERF_TARGET)}", envMetricsURLs, envPrometheus, s.backend)
	}
	if len(m.URLs) > 0 && m.Prometheus != "" {
		return fleetError("{MetricsURLs:replicas' metrics URLs} (%s) and {Prometheus:a Prometheus server} (%s) both say where the metrics are: give one", envMetricsURLs, envPrometheus)
	}
	if m.Selector != "" && m.Prometheus == "" {
		return fleetError("{PrometheusSelector:a Prometheus selector} (%s) picks series in Prometheus: give {Prometheus:a Prometheus} URL (%s) too", envPrometheusSelector, envPrometheus)
	}
	if m.Prometheus != "" {
		base, err := metricsURL(m.Prometheus, "")
		if err != nil {
			return fleetError("{Prometheus:the Prometheus URL} (%s): %w", envPrometheus, err)
		}
		m.Prometheus = strings.TrimSuffix(base, "/")
		if !strings.HasPrefix(strings.TrimSpace(m.Selector), "{") || !strings.HasSuffix(strings.TrimSpace(m.Selector), "}") {
			return fleetError("{PrometheusSelector:the Prometheus selector} (%s) %q: want label matchers that pick the deployment's series and no other's, e.g. {namespace=\"llm\",service=\"vllm\"}", envPrometheusSelector, m.Selector)
		}
		return nil
	}
	seen := map[string]bool{}
	for i, u := range m.URLs {
		full, err := metricsURL(u, "/metrics")
		if err != nil {
			return fleetError("{MetricsURLs:a metrics URL} (%s): %w", envMetricsURLs, err)
		}
		if seen[full] {
			return fleetError("{MetricsURLs:the metrics URLs} (%s): %s is given twice; each replica once, or its counters count double", envMetricsURLs, full)
		}
		seen[full] = true
		m.URLs[i] = full
	}
	return nil
}

// metricsURL checks an http(s) URL with a host and gives it path when it
// has none.
func metricsURL(raw, path string) (string, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q: want an http:// or https:// URL with a host, e.g. http://vllm-0.vllm:8000/metrics", raw)
	}
	if u.User != nil {
		return "", fmt.Errorf("%s://%s: put no credentials in the URL", u.Scheme, u.Host)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = path
	}
	return u.String(), nil
}

// SplitList splits a comma-separated list (VLLMPERF_METRICS_URLS, a
// repeated flag's value), dropping empty entries.
func SplitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// metricsFromEnv appends the options of the fleet's variables to opts.
func metricsFromEnv(get func(string) string, opts []Option) []Option {
	if urls := SplitList(get(envMetricsURLs)); len(urls) > 0 {
		opts = append(opts, WithMetricsURLs(urls...))
	}
	if p, sel := get(envPrometheus), get(envPrometheusSelector); p != "" || sel != "" {
		opts = append(opts, WithPrometheus(p, sel))
	}
	return opts
}

// metrics is where the deployment's series are read: its replicas or
// Prometheus when given, else the target's /metrics.
func (s *externalServer) metrics() Metrics { return s.where }
