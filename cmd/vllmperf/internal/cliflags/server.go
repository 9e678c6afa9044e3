package cliflags

import (
	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// Server defines the server flags on f: a running server (--target), or
// the profile, backend and image of one to start, and where a fleet's
// metrics are read.
func Server(f *pflag.FlagSet, o *ServerFlags) {
	f.StringVar(&o.Target, "target", "", "base URL of a running OpenAI-compatible server, e.g. http://127.0.0.1:8000 (nothing is started; a URL with /v1/... is cut back to it)")
	f.StringVar(&o.Model, "model", "", "served model name to request (default: the profile's model, or the target's first /v1/models entry)")
	f.DurationVar(&o.WaitReady, "wait-ready", 0, "with --target: wait up to this long for /health to answer 200, for a server that is still starting (0: check once)")
	f.StringVar(&o.Backend, "backend", "", "server to start when --target is not given: sim, container or external (default sim; also "+envvar.Backend.Name+"); not vLLM's --backend, which picks the API: that is --endpoint here")
	f.StringVar(&o.Profile, "profile", "basic", "server profile: a built-in name (see 'vllmperf profiles') or a YAML file; not with --target")
	Gateway(f, &o.Gateway)
	f.StringVar(&o.Image, "image", "", "container image (implies --backend container), or \"sim\" for the simulator image (also "+envvar.Image.Name+"); not with --target")
	fleet(f, o)
}

// fleet defines the fleet's flags.
func fleet(f *pflag.FlagSet, o *ServerFlags) {
	f.StringArrayVar(&o.MetricsURLs, "metrics-url", nil, "with --target: a replica's /metrics URL, once per replica of a deployment behind a load balancer (summed as one deployment, restarts judged per replica; also "+envvar.MetricsURLs.Name+", comma-separated)")
	f.StringVar(&o.Prometheus, "prometheus", "", "with --target: read the deployment's vLLM series through this Prometheus server (its base URL) instead of /metrics; needs --prometheus-selector (also "+envvar.Prometheus.Name+")")
	f.StringVar(&o.PrometheusSelector, "prometheus-selector", "", "with --prometheus: label matchers that pick the deployment's series, e.g. '{namespace=\"llm\",service=\"vllm\"}' (also "+envvar.PrometheusSelector.Name+")")
}
