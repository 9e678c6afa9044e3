package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/gateway"
	"github.com/vllmperf/vllmperf/internal/target/profile"
)

// Flags are a command's server flags (vllmperf run): a running server
// (--target) or the profile, backend and image of one to start. The
// environment's settings (FromEnv) come first, the flags after them.
// The command binds them (cmd/vllmperf/internal/cliflags); Options
// checks them.
type Flags struct {
	Target    string
	Model     string
	WaitReady time.Duration
	Backend   string
	Profile   string
	Image     string
	// Gateway is how a --target is reached: headers, CA and client
	// certificates (package gateway).
	Gateway gateway.Flags
	// MetricsURLs, Prometheus and PrometheusSelector say where a
	// fleet's metrics are read (fleet.go).
	MetricsURLs        []string
	Prometheus         string
	PrometheusSelector string
}

// Options checks the flags (changed says which were given) and returns the
// profile and the options for Run: the environment's first, the flags'
// after them, with key. Every error names the flag or variable and the
// fix. A --target cut back to the base URL is said on stderr; the
// server's own log goes there too unless quiet.
func (o *Flags) Options(changed func(name string) bool, key string, stderr io.Writer, quiet bool) (profile.Profile, []Option, error) {
	if err := o.check(changed); err != nil {
		return profile.Profile{}, nil, err
	}
	opts, err := FromEnv()
	if err != nil {
		return profile.Profile{}, nil, err
	}
	if opts, err = o.flagOptions(opts, stderr); err != nil {
		return profile.Profile{}, nil, err
	}
	opts = append(opts, WithAPIKey(key), WithWaitReady(o.WaitReady))
	if !quiet {
		opts = append(opts, WithLog(stderr))
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
func (o *Flags) flagOptions(opts []Option, stderr io.Writer) ([]Option, error) {
	if o.Backend != "" {
		k, err := ParseKind(o.Backend)
		if err != nil {
			return nil, fmt.Errorf("--backend: %w", err)
		}
		if o.Target != "" && k != KindExternal {
			return nil, fmt.Errorf("--target names a running server, so --backend %s would start nothing: drop one of them", o.Backend)
		}
		opts = append(opts, WithBackend(k))
	}
	if o.Target != "" {
		base, cut, err := ParseTarget(o.Target)
		if err != nil {
			return nil, fmt.Errorf("--target: %w", err)
		}
		if cut {
			fmt.Fprintf(stderr, "vllmperf: --target %s: using the server's base URL %s (vllmperf adds the API paths)\n", o.Target, base)
		}
		opts = append(opts, WithBackend(KindExternal), WithTarget(base))
	}
	if o.Image != "" {
		opts = append(opts, WithImage(o.Image))
		if o.Backend == "" {
			opts = append(opts, WithBackend(KindContainer)) // an image only means something to the container backend
		}
	}
	if o.Model != "" {
		opts = append(opts, WithModel(o.Model)) // the external backend checks the server serves it
	}
	if o.Gateway.Given() {
		g, err := o.Gateway.Gateway() // over the environment's (FromEnv)
		if err != nil {
			return nil, settingsError{err}
		}
		opts = append(opts, WithGateway(g))
	}
	return o.fleetOptions(opts), nil
}

// check refuses flags that mean nothing with the backend chosen: a
// profile or an image for a server that is already running.
func (o *Flags) check(changed func(string) bool) error {
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
	if o.Image != "" && o.Backend != "" && !strings.EqualFold(strings.TrimSpace(o.Backend), string(KindContainer)) {
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
func (o *Flags) externalSource() string {
	backend := strings.TrimSpace(o.Backend)
	switch {
	case o.Target != "":
		return "--target"
	case strings.EqualFold(backend, string(KindExternal)):
		return "--backend external"
	case backend == "" && strings.EqualFold(strings.TrimSpace(os.Getenv(envBackend)), string(KindExternal)):
		return envBackend + "=external"
	}
	return ""
}

// StartError adds what the user can do to Run's error: wait for a server
// that is still starting.
func (o *Flags) StartError(err error) error {
	if errors.Is(err, ErrUnhealthy) && o.WaitReady == 0 {
		return fmt.Errorf("%w\nif the server is still starting, wait for it with --wait-ready, e.g. --wait-ready 5m", err)
	}
	return err
}

// StopTimeout bounds Stop.
const StopTimeout = time.Minute

// Stop closes srv (a container is removed) even when ctx was canceled, as
// after an interrupted run, waiting at most StopTimeout.
func Stop(ctx context.Context, srv Server) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), StopTimeout)
	defer cancel()
	return srv.Close(ctx)
}
