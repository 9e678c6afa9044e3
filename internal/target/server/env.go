package server

import (
	"cmp"
	"os"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/gateway"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// The environment variables FromEnv reads (docs/gpu-runners.md; package
// envvar declares them).
var (
	envBackend        = envvar.Backend.Name
	envImage          = envvar.Image.Name
	envGPUs           = envvar.GPUs.Name
	envTarget         = envvar.Target.Name
	envStartupTimeout = envvar.StartupTimeout.Name
	envHFCache        = envvar.HFCache.Name
	envModel          = envvar.Model.Name
	envEntrypoint     = envvar.Entrypoint.Name
	envSimBinary      = envvar.SimBinary.Name
	envFamily         = envvar.Family.Name
	envOwnHFToken     = envvar.HFToken.Name
)

// Hugging Face's own variables (not ours: package envvar declares
// vllmperf's settings only): the token passed into containers (when
// VLLMPERF_HF_TOKEN is unset), and the cache folder VLLMPERF_HF_CACHE
// defaults to.
const (
	envHFToken = "HF_TOKEN"
	envHFHome  = "HF_HOME"
)

// KindFromEnv is the backend VLLMPERF_BACKEND selects (KindSim when
// unset); its error wraps ErrSettings and names the variable.
func KindFromEnv() (Kind, error) {
	k, err := ParseKind(os.Getenv(envBackend))
	if err != nil {
		return "", settingsErrorf("%s: %w", envBackend, err)
	}
	return k, nil
}

// FromEnv reads the settings from the environment, as options for Run;
// options a caller appends after them (from flags) win. Its errors wrap
// ErrSettings and name the variable.
func FromEnv() ([]Option, error) {
	return fromLookup(os.LookupEnv)
}

func fromLookup(lookup func(string) (string, bool)) ([]Option, error) {
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	var opts []Option
	add := func(k string, o func(string) Option) {
		if v := get(k); v != "" {
			opts = append(opts, o(v))
		}
	}
	if v := get(envBackend); v != "" {
		k, err := ParseKind(v)
		if err != nil {
			return nil, settingsErrorf("%s: %w", envBackend, err)
		}
		opts = append(opts, WithBackend(k))
	}
	if v := get(envStartupTimeout); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, settingsErrorf("%s=%q: want a positive Go duration such as 30m or 90s", envStartupTimeout, v)
		}
		opts = append(opts, withStartupTimeout(d))
	}
	if v := get(envGPUs); v != "" {
		if _, err := parseGPUs(v); err != nil {
			return nil, err
		}
		opts = append(opts, withGPUs(v))
	}
	fam := serverfamily.Default
	if v := get(envFamily); v != "" {
		f, err := serverfamily.ByName(v)
		if err != nil {
			return nil, settingsErrorf("%s: %w", envFamily, err)
		}
		fam = f
		opts = append(opts, WithFamily(f))
	}
	if v := get(envEntrypoint); v != "" {
		if _, err := fam.Launch(v); err != nil {
			return nil, settingsErrorf("%s: %w", envEntrypoint, err)
		}
		opts = append(opts, WithEntrypoint(v))
	}
	if v := get(envTarget); v != "" {
		if _, _, err := ParseTarget(v); err != nil {
			return nil, settingsErrorf("%s: %w", envTarget, err)
		}
		opts = append(opts, WithTarget(v))
	}
	gc, err := gateway.FromLookup(lookup)
	if err != nil {
		return nil, settingsError{err}
	}
	g, err := gc.Load(lookup)
	if err != nil {
		return nil, settingsError{err}
	}
	if !g.Direct() {
		opts = append(opts, WithGateway(g))
	}
	add(envImage, WithImage)
	add(envHFCache, withHFCache)
	if v := cmp.Or(get(envOwnHFToken), get(envHFToken)); v != "" {
		opts = append(opts, withHFToken(v))
	}
	add(envModel, WithModel)
	add(envSimBinary, withSimBinary)
	return metricsFromEnv(get, opts), nil
}
