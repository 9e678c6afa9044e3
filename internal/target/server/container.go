package server

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"

	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
	"github.com/vllmperf/vllmperf/internal/vocab/cliarg"
)

// The container's side.
const (
	// containerPort is the port vLLM (and vllm-sim) listens on inside the
	// container.
	containerPort = 8000
	// containerHFCache is where the host's Hugging Face cache is mounted.
	containerHFCache = "/root/.cache/huggingface"
	// simBinaryPath is the simulator's path in its image (build/sim/Dockerfile).
	simBinaryPath = "/vllm-sim"
)

// containerPortSpec is containerPort as Docker names it, "8000/tcp".
var containerPortSpec = strconv.Itoa(containerPort) + "/tcp"

// Waits around a container's life.
const (
	// failureLogLines is how many of a failed container's last log lines
	// an error carries.
	failureLogLines = 30
	// removeTimeout bounds the removal of a container, which runs on a
	// fresh context so that it happens also after the caller's context
	// ended (an interrupted test, a cancelled run).
	removeTimeout = 30 * time.Second
	// stopTimeout is how long a container gets to stop (SIGTERM) before
	// it is killed at removal.
	stopTimeout = 5 * time.Second
	// failureLogsTimeout bounds reading a failed container's logs.
	failureLogsTimeout = 10 * time.Second
)

// containerRequest describes the container for a profile, built without
// touching Docker so that tests can check it.
type containerRequest struct {
	image           string // the image reference (SimImage until the simulator image is built)
	entrypoint, cmd []string
	env             map[string]secret // HF_TOKEN is a secret; the rest print as they are
	labels          map[string]string
	gpus            gpuSelection
	leaseOnly       bool   // gpus name the lease only (the simulator image asks Docker for no device: gpuset.go)
	ipcHost         bool   // --ipc=host: vLLM's workers share memory
	hfCache         string // the host directory mounted at containerHFCache; "" for none
	traceDir        string // the host's trace folder mounted at containerTraceDir; "" for none
	startupTimeout  time.Duration
	servedModel     string
	profile         string
}

// String describes the request with secrets redacted.
func (r containerRequest) String() string {
	var env []string
	for k, v := range r.env {
		if k == envHFToken || LooksSecret(k) {
			env = append(env, k+"="+secret(v).String())
			continue
		}
		env = append(env, k+"="+string(v))
	}
	return fmt.Sprintf("image=%s entrypoint=%q cmd=%q env=%v gpus=%+v ipc-host=%v hf-cache=%s startup-timeout=%s",
		r.image, r.entrypoint, r.cmd, env, r.gpus, r.ipcHost, r.hfCache, r.startupTimeout)
}

// GoString is String: %#v shows no secret either.
func (r containerRequest) GoString() string { return r.String() }

// buildRequest lays out the container for p: no Docker, no I/O but the
// home directory lookup for the default Hugging Face cache.
//
// The command is the server family's launch layout (settings.launch): for
// vLLM `vllm serve MODEL --host 0.0.0.0 --port 8000 FLAGS...` (serve; the
// image's ENTRYPOINT is replaced so any tag works), `python3 -m
// vllm.entrypoints.openai.api_server --model MODEL ...` (api_server), or
// the image's own ENTRYPOINT with `--model MODEL --port 8000 FLAGS...`
// (image; no --host: llm-d-inference-sim has none and listens on every
// interface). The container gets --ipc=host, the GPU device request, the
// host's Hugging Face cache, HF_TOKEN when set, and usage statistics
// turned off. For the simulator image the command is `/vllm-sim MODEL
// --host 0.0.0.0 --port 8000 FLAGS... SIMFLAGS...`.
func buildRequest(s settings, p profile.Profile) (containerRequest, error) {
	p = p.WithModel(s.model)
	gpus, err := parseGPUs(s.gpuList())
	if err != nil {
		return containerRequest{}, err
	}
	r := containerRequest{
		image:          s.image,
		env:            map[string]secret{},
		labels:         map[string]string{labelManaged: "true", labelProfile: p.Name, labelSession: session(), labelOwner: self().String(), labelJob: Job(), labelGPUs: gpus.String()},
		gpus:           gpus,
		leaseOnly:      s.isSimImage(),
		ipcHost:        true,
		startupTimeout: s.timeout(),
		servedModel:    p.ServedName(),
		profile:        p.Name,
	}
	listen := slices.Concat(cliarg.Host.With("0.0.0.0"), cliarg.Port.With(strconv.Itoa(containerPort)))
	r.applyEnv(p)
	r.applyTraces(s.traceDir)
	if s.isSimImage() {
		r.entrypoint = []string{simBinaryPath}
		r.cmd = append(append([]string{p.Model}, listen...), p.SimArgs()...)
		return r, nil
	}
	l, err := s.launch()
	if err != nil {
		return containerRequest{}, settingsError{err}
	}
	r.entrypoint = slices.Clone(l.Entrypoint)
	r.cmd = l.Command(p.Model, containerPort, p.Args())
	if r.hfCache, err = s.hfCacheDir(); err != nil {
		return containerRequest{}, err
	}
	if s.hfToken != "" {
		r.env[envHFToken] = s.hfToken
	}
	// The family's own settings (vLLM's keep it from phoning home).
	for k, v := range serverfamily.OrDefault(s.family).Env {
		r.env[k] = secret(v)
	}
	return r, nil
}

// options turns the request into testcontainers-go options.
func (r containerRequest) options() []testcontainers.ContainerCustomizer {
	env := map[string]string{}
	for k, v := range r.env {
		env[k] = string(v)
	}
	opts := []testcontainers.ContainerCustomizer{
		testcontainers.WithCmd(r.cmd...),
		testcontainers.WithEnv(env),
		testcontainers.WithLabels(r.labels),
		testcontainers.WithExposedPorts(containerPortSpec),
		testcontainers.WithHostConfigModifier(r.modifyHostConfig),
		// Not WithWaitStrategy: it caps the wait at 60 s whatever the
		// strategy's own timeout (vllm-reference.md §4).
		testcontainers.WithWaitStrategyAndDeadline(r.startupTimeout, healthStrategy{port: containerPortSpec, timeout: r.startupTimeout}),
	}
	if len(r.entrypoint) > 0 {
		// None (a layout without an Entrypoint, such as vLLM's image): the image's own ENTRYPOINT runs.
		opts = append(opts, testcontainers.WithEntrypoint(r.entrypoint...))
	}
	return opts
}

// modifyHostConfig applies GPUs, --ipc=host, the cache mount and a
// loopback-only port binding.
func (r containerRequest) modifyHostConfig(hc *container.HostConfig) {
	switch {
	case r.leaseOnly:
	case r.gpus.all:
		hc.DeviceRequests = append(hc.DeviceRequests, container.DeviceRequest{Count: -1, Capabilities: [][]string{{"gpu"}}})
	case len(r.gpus.ids) > 0:
		hc.DeviceRequests = append(hc.DeviceRequests, container.DeviceRequest{DeviceIDs: r.gpus.ids, Capabilities: [][]string{{"gpu"}}})
	}
	if r.ipcHost {
		hc.IpcMode = container.IPCModeHost
	}
	if r.hfCache != "" {
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: r.hfCache, Target: containerHFCache})
	}
	hc.Mounts = append(hc.Mounts, r.traceMounts()...)
	// Publish the API on loopback only: nothing but this machine reaches it.
	port := network.MustParsePort(containerPortSpec)
	if hc.PortBindings == nil {
		hc.PortBindings = network.PortMap{}
	}
	hc.PortBindings[port] = []network.PortBinding{{HostIP: netip.MustParseAddr(loopback), HostPort: "0"}}
}

// runContainer starts a container for p and waits for /health. A container
// that exits (a flag vLLM rejects) fails at once with its last log lines;
// the container is removed on every failure.
func runContainer(ctx context.Context, s settings, p profile.Profile) (Server, error) {
	if ctx.Err() != nil { // stopped before the start: not Docker's fault
		return nil, fmt.Errorf("start vllm: profile %s: %w", p.Name, context.Cause(ctx))
	}
	if err := DockerAvailable(ctx); err != nil {
		return nil, fmt.Errorf("start vllm: %w: %v (start dockerd, or use the sim backend)", ErrNoDocker, err)
	}
	req, err := buildRequest(s, p)
	if err != nil {
		return nil, fmt.Errorf("start vllm: %w", err)
	}
	if s.isSimImage() {
		req.image, err = ensureSimImage(ctx, s)
	} else {
		err = ensureImage(ctx, s, req.image)
	}
	if err != nil {
		return nil, fmt.Errorf("start vllm: %w", err)
	}
	if req.hfCache != "" {
		if err := os.MkdirAll(req.hfCache, 0o755); err != nil {
			return nil, fmt.Errorf("start vllm: Hugging Face cache %s: %w (set %s)", req.hfCache, err, envHFCache)
		}
	}
	// One server per GPU set at a time, across processes too (lease.go).
	gpus, note := canonicalGPUs(ctx, req.gpus, listGPUs)
	if note != "" {
		s.logf("%s", note)
	}
	held, err := acquire(ctx, s, containerLocks(gpus), holderLine(KindContainer, req.profile))
	if err != nil {
		return nil, fmt.Errorf("start vllm: profile %s: %w", req.profile, err)
	}
	// What a killed process left on these GPUs goes first (reap.go).
	if err := clearLeftovers(ctx, s, req.gpus); err != nil {
		held.release()
		return nil, fmt.Errorf("start vllm: profile %s: %w", req.profile, err)
	}
	// Time to ready counts from here: the image is local (built, or pulled
	// beforehand), the GPUs are this server's, the rest is its cold start.
	begin := time.Now()
	logs := newLineRing(s.redact)
	opts := append(req.options(), testcontainers.WithLogger(redactLogger{s}), testcontainers.WithLogConsumers(logs))
	s.logf("vllm container: starting profile %s: %s", req.profile, req)
	startedContainer.Store(true)
	c, err := testcontainers.Run(ctx, req.image, opts...)
	if err != nil {
		lines := containerLogs(c, logs)
		rmErr := remove(c)
		held.release()
		return nil, newStartFailure(s, req, err, lines, rmErr)
	}
	port, err := c.MappedPort(ctx, containerPortSpec)
	if err != nil {
		rmErr := remove(c)
		held.release()
		return nil, newStartFailure(s, req, err, logs.Last(failureLogLines), rmErr)
	}
	srv := &containerServer{
		endpoint: endpoint{base: "http://" + net.JoinHostPort(loopback, port.Port()), model: req.servedModel, ready: time.Since(begin), logs: logs,
			desc: Description{Backend: KindContainer, Image: req.image, Simulator: s.image == SimImage}, fam: s.family},
		c:     c,
		lease: held,
	}
	describeContainer(ctx, &srv.desc, req)
	s.logf("vllm container: profile %s ready in %s at %s (container %.12s)", req.profile, srv.ready.Round(time.Millisecond), srv.base, c.GetContainerID())
	return srv, nil
}

// startFailure is a failed container start: what failed, the argparse
// complaint when vLLM rejected a flag, the container's last log lines.
type startFailure struct {
	msg  string
	err  error
	logs []string // the container's last log lines, redacted
}

func (e *startFailure) Error() string { return e.msg }
func (e *startFailure) Unwrap() error { return e.err }

func newStartFailure(s settings, req containerRequest, err error, lines []string, rmErr error) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "start vllm: profile %s in %s: %s", req.profile, req.image, s.redact(err.Error()))
	if hint := reaperHint(err); hint != "" {
		fmt.Fprintf(&sb, "\n%s", hint)
	}
	if why := argparseError(lines); why != "" {
		fmt.Fprintf(&sb, "\nthe server rejected its command line: %s", why)
	}
	if len(lines) > 0 {
		fmt.Fprintf(&sb, "\nlast %d log lines of the container:\n  %s", len(lines), strings.Join(lines, "\n  "))
	}
	if rmErr != nil {
		fmt.Fprintf(&sb, "\nremoving the container failed too: %v (find it with docker ps -a --filter label=%s=true)", rmErr, labelManaged)
	}
	return &startFailure{msg: sb.String(), err: err, logs: lines}
}

// argparseError picks the line where vLLM's argument parser says what it
// rejected ("vllm serve: error: unrecognized arguments: --max-num-seq 8"),
// or a Go server's flag parser (pflag: `unknown flag: --dtype`;
// llm-d-inference-sim logs it and exits 0).
func argparseError(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		if strings.Contains(l, ": error: ") || strings.Contains(l, "unrecognized arguments") || strings.Contains(l, "unknown flag: ") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// containerLogs reads the container's last lines through Docker (complete
// even when the log follower has not caught up), falling back to ring.
func containerLogs(c *testcontainers.DockerContainer, ring *lineRing) []string {
	if c == nil {
		return ring.Last(failureLogLines)
	}
	ctx, cancel := context.WithTimeout(context.Background(), failureLogsTimeout)
	defer cancel()
	rc, err := c.Logs(ctx)
	if err != nil {
		return ring.Last(failureLogLines)
	}
	defer rc.Close()
	tmp := newLineRing(ring.redact)
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		tmp.add(sc.Text())
	}
	if lines := tmp.Last(failureLogLines); len(lines) > 0 {
		return lines
	}
	return ring.Last(failureLogLines)
}

// remove removes the container on a fresh context.
func remove(c *testcontainers.DockerContainer) error {
	if c == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
	defer cancel()
	return testcontainers.TerminateContainer(c, testcontainers.StopContext(ctx), testcontainers.StopTimeout(stopTimeout))
}

// containerServer is a running container.
type containerServer struct {
	endpoint
	c      *testcontainers.DockerContainer
	lease  *lease // the GPUs, given back once the container is gone
	closed closeOnce
}

// containerID returns the Docker container id.
func (s *containerServer) containerID() string { return s.c.GetContainerID() }

// Close stops and removes the container. It runs on its own bounded
// context so that removal happens also when ctx is already done.
func (s *containerServer) Close(context.Context) error {
	return s.closed.do(func() error {
		// The lease goes back even when removal failed (the error says
		// so): held on, it would stall every later start of this process.
		defer s.lease.release()
		if err := remove(s.c); err != nil {
			return fmt.Errorf("remove container %.12s: %w", s.c.GetContainerID(), err)
		}
		return nil
	})
}
