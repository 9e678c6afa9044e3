package cliflags

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/gateway"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// ServerFlags are a command's server flags (vllmperf run): a running
// server (--target) or the profile, backend and image of one to start.
// The environment's settings (server.FromEnv) come first, the flags after
// them. Server binds them; Options checks them.
type ServerFlags struct {
	Target    string
	Model     string
	WaitReady time.Duration
	Backend   string
	Profile   string
	Image     string
	// Gateway is how a --target is reached: headers, CA and client
	// certificates (package gateway).
	Gateway gateway.Overrides
	// MetricsURLs, Prometheus and PrometheusSelector say where a
	// fleet's metrics are read.
	MetricsURLs        []string
	Prometheus         string
	PrometheusSelector string
}

// Options checks the flags (changed says which were given) and returns the
// profile and the options for Run: the environment's first, the flags'
// after them, with key. Every error names the flag or variable and the
// fix. A --target cut back to the base URL is said on stderr; the
// server's own log goes there too unless quiet.
func (o *ServerFlags) Options(changed func(name string) bool, key string, stderr io.Writer, quiet bool) (profile.Profile, []server.Option, error) {
	if err := o.check(changed); err != nil {
		return profile.Profile{}, nil, err
	}
	opts, err := server.FromEnv()
	if err != nil {
		return profile.Profile{}, nil, err
	}
	if opts, err = o.flagOptions(opts, stderr); err != nil {
		return profile.Profile{}, nil, err
	}
	opts = append(opts, server.WithAPIKey(key), server.WithWaitReady(o.WaitReady))
	if !quiet {
		opts = append(opts, server.WithLog(stderr))
	}
	if o.externalSource() != "" {
		// A running deployment: its flags are its own, no profile applies.
		return profile.Deployment(""), opts, nil
	}
	p, err := profile.Resolve(o.Profile)
	if err != nil {
		return p, nil, fmt.Errorf("--profile: %w", err)
	}
	return p, opts, nil
}

// flagOptions appends the flags' options to opts.
func (o *ServerFlags) flagOptions(opts []server.Option, stderr io.Writer) ([]server.Option, error) {
	if o.Backend != "" {
		k, err := server.ParseKind(o.Backend)
		if err != nil {
			return nil, fmt.Errorf("--backend: %w", err)
		}
		if o.Target != "" && k != server.KindExternal {
			return nil, fmt.Errorf("--target names a running server, so --backend %s would start nothing: drop one of them", o.Backend)
		}
		opts = append(opts, server.WithBackend(k))
	}
	if o.Target != "" {
		base, cut, err := server.ParseTarget(o.Target)
		if err != nil {
			return nil, fmt.Errorf("--target: %w", err)
		}
		if cut {
			fmt.Fprintf(stderr, "vllmperf: --target %s: using the server's base URL %s (vllmperf adds the API paths)\n", o.Target, base)
		}
		opts = append(opts, server.WithBackend(server.KindExternal), server.WithTarget(base))
	}
	if o.Image != "" {
		opts = append(opts, server.WithImage(o.Image))
		if o.Backend == "" {
			opts = append(opts, server.WithBackend(server.KindContainer)) // an image only means something to the container backend
		}
	}
	if o.Model != "" {
		opts = append(opts, server.WithModel(o.Model)) // the external backend checks the server serves it
	}
	if o.Gateway.Given() {
		g, err := o.Gateway.Gateway() // over the environment's (FromEnv)
		if err != nil {
			return nil, server.WrapSettings(err)
		}
		opts = append(opts, server.WithGateway(g))
	}
	return o.fleetOptions(opts), nil
}

// check refuses flags that mean nothing with the backend chosen: a
// profile or an image for a server that is already running.
func (o *ServerFlags) check(changed func(string) bool) error {
	if o.WaitReady < 0 {
		return fmt.Errorf("--wait-ready %s: want a positive duration such as 2m, or 0 to check /health once", o.WaitReady)
	}
	given := o.externalSource()
	external := given != ""
	for _, name := range []string{"profile", "image"} {
		if external && changed(name) {
			return fmt.Errorf("--%s needs a backend that starts a server, but %s names one that is already running (with its own flags): drop --%s", name, given, name)
		}
	}
	if o.Image != "" && o.Backend != "" && !strings.EqualFold(strings.TrimSpace(o.Backend), string(server.KindContainer)) {
		return fmt.Errorf("--image runs a container, but --backend %s starts none: use --backend container, or drop one of them", o.Backend)
	}
	if o.Gateway.Given() && !external {
		return fmt.Errorf("--header, --ca-cert, --client-cert and --client-key say how to reach a running server: give --target too (the servers vllmperf starts are reached directly)")
	}
	if err := o.checkFleet(external); err != nil {
		return err
	}
	if o.WaitReady > 0 && !external {
		return fmt.Errorf("--wait-ready waits for a running server named by --target; the servers vllmperf starts are waited for anyway")
	}
	return nil
}

// externalSource names what selects the external backend (a server that
// is already running): "--target", "--backend external", or the
// environment's VLLMPERF_BACKEND=external; "" when another backend runs.
func (o *ServerFlags) externalSource() string {
	backend := strings.TrimSpace(o.Backend)
	switch {
	case o.Target != "":
		return "--target"
	case strings.EqualFold(backend, string(server.KindExternal)):
		return "--backend external"
	case backend == "" && strings.EqualFold(strings.TrimSpace(os.Getenv(envvar.Backend.Name)), string(server.KindExternal)):
		return envvar.Backend.Name + "=external"
	}
	return ""
}

// StartError adds what the user can do to Run's error: wait for a server
// that is still starting.
func (o *ServerFlags) StartError(err error) error {
	if errors.Is(err, server.ErrUnhealthy) && o.WaitReady == 0 {
		return fmt.Errorf("%w\nif the server is still starting, wait for it with --wait-ready, e.g. --wait-ready 5m", err)
	}
	return err
}

// checkFleet refuses the fleet's flags without a running deployment.
func (o *ServerFlags) checkFleet(external bool) error {
	if external {
		return nil
	}
	for _, name := range []string{"metrics-url", "prometheus", "prometheus-selector"} {
		if (name == "metrics-url" && len(o.MetricsURLs) > 0) || (name == "prometheus" && o.Prometheus != "") || (name == "prometheus-selector" && o.PrometheusSelector != "") {
			return fmt.Errorf("--%s reads a deployment that is already running, named by --target; the server vllmperf starts is read at its own /metrics: drop --%s, or pass --target", name, name)
		}
	}
	return nil
}

// fleetOptions appends the fleet flags' options to opts (after the
// environment's, so they win).
func (o *ServerFlags) fleetOptions(opts []server.Option) []server.Option {
	if len(o.MetricsURLs) > 0 {
		var urls []string
		for _, u := range o.MetricsURLs {
			urls = append(urls, server.SplitList(u)...)
		}
		opts = append(opts, server.WithMetricsURLs(urls...))
	}
	if o.Prometheus != "" || o.PrometheusSelector != "" {
		opts = append(opts, server.WithPrometheus(o.Prometheus, o.PrometheusSelector))
	}
	return opts
}
