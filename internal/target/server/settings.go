package server

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/gateway"
	"github.com/vllmperf/vllmperf/internal/target/server/lease"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
)

// secret is a string that formats as [REDACTED].
type secret string

// String redacts the secret.
func (s secret) String() string {
	if s == "" {
		return ""
	}
	return "[REDACTED]"
}

// GoString redacts the secret in %#v.
func (s secret) GoString() string { return `"` + s.String() + `"` }

// settings are Run's settings, defaults first (defaultSettings), then the
// caller's options.
type settings struct {
	backend Kind
	// image is the container image, or SimImage.
	image string
	// gpus says which GPUs a container gets: "all", "none", or device ids
	// "0,1". Empty: all for a vLLM image, none for the simulator image.
	gpus string
	// target is the external server's base URL.
	target string
	// waitReady is how long the external backend waits for /health.
	waitReady time.Duration
	// startupTimeout bounds start-up, /health included. Zero:
	// defaultStartupTimeout for a vLLM image, defaultSimStartupTimeout for
	// the simulator.
	startupTimeout time.Duration
	// hfCache is the host's Hugging Face cache, mounted into vLLM
	// containers. Empty: $HF_HOME or ~/.cache/huggingface.
	hfCache string
	// hfToken goes to vLLM containers as HF_TOKEN.
	hfToken secret
	// apiKey is the external server's bearer token.
	apiKey secret
	// gateway is how the external server is reached (headers, TLS);
	// nil: directly.
	gateway *gateway.Gateway
	// model overrides every profile's model.
	model string
	// entrypoint names the family's launch layout of a container's
	// command ("": the family's default).
	entrypoint string
	// family is the kind of server: its launch layouts and metric names
	// (nil: serverfamily.Default).
	family *serverfamily.Family
	// simBinary is a prebuilt static vllm-sim for the simulator image;
	// empty: build cmd/vllm-sim from the checkout.
	simBinary string
	// log receives progress lines; nil discards them.
	log io.Writer
	// traceDir is the profiler's trace folder on this machine
	// (WithTorchProfiler); "" leaves the profiler off.
	traceDir string
	// leaseWaited, when set, is told how long a start waited for its
	// lease (tests that bound a start's duration subtract it).
	leaseWaited func(time.Duration)
	// metrics says where an external deployment's series are read when
	// not at its target's /metrics alone (fleet.go).
	metrics Metrics
}

// String describes the settings with secrets redacted (fmt's %v and %+v
// cannot reach the secrets' own String through unexported fields).
func (s settings) String() string {
	return fmt.Sprintf("backend=%s image=%s gpus=%s target=%s wait-ready=%s startup-timeout=%s hf-cache=%s hf-token=%s api-key=%s gateway=%s model=%s family=%s entrypoint=%s sim-binary=%s",
		s.backend, s.image, s.gpuList(), s.target, s.waitReady, s.timeout(), s.hfCache, s.hfToken, s.apiKey, s.gateway, s.model, serverfamily.OrDefault(s.family).Name, s.layoutName(), s.simBinary)
}

// layoutName is the launch layout entrypoint resolves to (the family's
// default for ""), or entrypoint itself when the family has no such one.
func (s settings) layoutName() string {
	if l, err := s.launch(); err == nil {
		return l.Name
	}
	return s.entrypoint
}

// GoString is String: %#v shows no secret either.
func (s settings) GoString() string { return s.String() }

// launch is the layout of a container's command line: the family's
// layout named by entrypoint.
func (s settings) launch() (serverfamily.Launch, error) {
	return serverfamily.OrDefault(s.family).Launch(s.entrypoint)
}

func defaultSettings() settings {
	return settings{backend: KindSim, image: DefaultImage}
}

// validate checks the settings; its errors wrap ErrSettings.
func (s *settings) validate() error {
	if _, err := ParseKind(string(s.backend)); err != nil {
		return settingsError{err}
	}
	if err := serverfamily.OrDefault(s.family).Check(); err != nil {
		return settingsError{err}
	}
	if _, err := s.launch(); err != nil {
		return settingsError{err}
	}
	if err := s.simulatorServes(); err != nil {
		return err
	}
	if s.startupTimeout < 0 {
		return settingsErrorf("startup timeout %s: must be positive", s.startupTimeout)
	}
	if s.waitReady < 0 {
		return settingsErrorf("wait for ready %s: must be positive, or 0 to check /health once", s.waitReady)
	}
	if _, err := parseGPUs(s.gpuList()); err != nil {
		return err
	}
	if s.backend == KindExternal && s.target == "" {
		return settingsError{settingError("backend external needs %s (or {Target:the WithTarget option}), the server's base URL (e.g. http://127.0.0.1:8000)", envTarget)}
	}
	return s.checkMetrics()
}

// isSimImage reports whether the container backend runs the simulator.
func (s settings) isSimImage() bool { return s.image == SimImage }

// gpuList is the effective GPU selection.
func (s settings) gpuList() string {
	switch {
	case s.gpus != "":
		return s.gpus
	case s.isSimImage():
		return "none"
	}
	return "all"
}

// timeout is the effective start-up deadline.
func (s settings) timeout() time.Duration {
	switch {
	case s.startupTimeout > 0:
		return s.startupTimeout
	case s.backend == KindSim || s.isSimImage():
		return defaultSimStartupTimeout
	}
	return defaultStartupTimeout
}

// hfCacheDir is the effective host Hugging Face cache directory.
func (s settings) hfCacheDir() (string, error) {
	if s.hfCache != "" {
		return filepath.Abs(s.hfCache)
	}
	if hf := os.Getenv(envHFHome); hf != "" {
		return filepath.Abs(hf)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory for the Hugging Face cache: set %s: %w", envHFCache, err)
	}
	return filepath.Join(home, ".cache", "huggingface"), nil
}

// logf writes a progress line to the log with secrets redacted.
func (s settings) logf(format string, args ...any) {
	if s.log == nil {
		return
	}
	fmt.Fprintln(s.log, s.redact(fmt.Sprintf(format, args...)))
}

// redact replaces every secret in text.
func (s settings) redact(text string) string {
	for _, sec := range []secret{s.hfToken, s.apiKey} {
		if sec != "" {
			text = strings.ReplaceAll(text, string(sec), sec.String())
		}
	}
	return s.gateway.Redact(text)
}

// gpuSelection is a parsed GPU list.
type gpuSelection = lease.GPUs

// parseGPUs parses "all", "none" (or "") and comma-separated device ids.
func parseGPUs(list string) (gpuSelection, error) {
	switch strings.ToLower(strings.TrimSpace(list)) {
	case "all":
		return gpuSelection{All: true}, nil
	case "", "none":
		return gpuSelection{}, nil
	}
	var ids []string
	for _, id := range strings.Split(list, ",") {
		id = strings.TrimSpace(id)
		if id == "" || strings.ContainsAny(id, " \t=") {
			return gpuSelection{}, settingsErrorf("%s=%q: want all, none, or device ids such as 0,1 (or GPU UUIDs)", envGPUs, list)
		}
		ids = append(ids, id)
	}
	return gpuSelection{IDs: ids}, nil
}

// simulatorServes refuses a simulator start (the sim backend, or the
// simulator image) for a registered family other than vLLM's: the
// simulator takes vLLM's flags, so another family's profiles would fail
// on their first flag. Unregistered test families are left to their tests.
func (s settings) simulatorServes() error {
	fam := serverfamily.OrDefault(s.family)
	if fam.Key == "" || fam.Key == serverfamily.VLLM.Key || (s.backend != KindSim && !s.isSimImage()) {
		return nil
	}
	return settingsErrorf("the simulator takes vLLM's flags, not %s's: measure %s with the container backend (%s=container, image %s) or a running server (%s=external, %s=URL), or set %s=%s for the simulator",
		fam.Name, fam.Name, envBackend, fam.Image, envBackend, envTarget, envFamily, serverfamily.VLLM.Key)
}
