package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/vllmperf/vllmperf/internal/harness/profile"
)

// ContainerBackend starts each profile in its own container through
// testcontainers-go: a vLLM image with GPUs, or the simulator image.
type ContainerBackend struct {
	cfg Config
}

// Kind returns KindContainer.
func (b *ContainerBackend) Kind() Kind { return KindContainer }

// failureLogLines is how many of a failed container's last log lines an
// error carries.
const failureLogLines = 30

// removeTimeout bounds the removal of a container, which runs on a fresh
// context so that it happens also after the caller's context ended (an
// interrupted test, a cancelled run).
const removeTimeout = 30 * time.Second

// Request describes the container the backend starts for a profile, built
// without touching Docker so that tests can check it.
type Request struct {
	// Image is the image reference.
	Image string
	// Entrypoint and Cmd form the container's command line.
	Entrypoint, Cmd []string
	// Env is the container environment; HF_TOKEN is a Secret.
	Env map[string]Secret
	// Labels mark the container (LabelManaged, LabelProfile, LabelSession).
	Labels map[string]string
	// GPUs is the device request; the zero value asks for none.
	GPUs GPUSelection
	// IPCHost is true for --ipc=host (vLLM's workers share memory).
	IPCHost bool
	// HFCache is the host directory mounted at ContainerHFCache; empty for
	// none.
	HFCache string
	// StartupTimeout bounds start-up and the /health wait.
	StartupTimeout time.Duration
	// ServedModel is the model name the server answers to.
	ServedModel string
	// Profile is the profile's name.
	Profile string
}

// String describes the request with secrets redacted.
func (r Request) String() string {
	var env []string
	for k, v := range r.Env {
		if k == EnvHFToken {
			env = append(env, k+"="+v.String())
			continue
		}
		env = append(env, k+"="+v.Reveal())
	}
	return fmt.Sprintf("image=%s entrypoint=%q cmd=%q env=%v gpus=%+v ipc-host=%v hf-cache=%s startup-timeout=%s",
		r.Image, r.Entrypoint, r.Cmd, env, r.GPUs, r.IPCHost, r.HFCache, r.StartupTimeout)
}

// BuildRequest lays out the container for p under cfg: no Docker, no I/O
// but the home directory lookup for the default Hugging Face cache.
//
// For a vLLM image the command is `vllm serve MODEL --host 0.0.0.0 --port
// 8000 FLAGS...` (EntrypointServe; the image's ENTRYPOINT is replaced so
// any tag works) or `python3 -m vllm.entrypoints.openai.api_server --model
// MODEL ...` (EntrypointAPIServer). The container gets --ipc=host, the GPU
// device request of cfg.GPUs, the host's Hugging Face cache, HF_TOKEN when
// set, and usage statistics turned off. For the simulator image the
// command is `/vllm-sim MODEL --host 0.0.0.0 --port 8000 FLAGS... SIMFLAGS...`.
func BuildRequest(cfg Config, p profile.Profile) (Request, error) {
	if err := cfg.Validate(); err != nil {
		return Request{}, err
	}
	p = p.WithModel(cfg.Model)
	gpus, err := parseGPUs(cfg.gpus())
	if err != nil {
		return Request{}, err
	}
	r := Request{
		Image:          cfg.Image,
		Env:            map[string]Secret{},
		Labels:         map[string]string{LabelManaged: "true", LabelProfile: p.Name, LabelSession: Session()},
		GPUs:           gpus,
		IPCHost:        true,
		StartupTimeout: cfg.startupTimeout(),
		ServedModel:    p.ServedName(),
		Profile:        p.Name,
	}
	listen := []string{"--host", "0.0.0.0", "--port", "8000"}
	if cfg.IsSimImage() {
		r.Image = simImageTag
		r.Entrypoint = []string{"/vllm-sim"}
		r.Cmd = append(append([]string{p.Model}, listen...), p.SimArgs()...)
		return r, nil
	}
	switch cfg.Entrypoint {
	case EntrypointAPIServer:
		r.Entrypoint = []string{"python3", "-m", "vllm.entrypoints.openai.api_server"}
		r.Cmd = append(append([]string{"--model", p.Model}, listen...), p.Args()...)
	default:
		r.Entrypoint = []string{"vllm", "serve"}
		r.Cmd = append(append([]string{p.Model}, listen...), p.Args()...)
	}
	if r.HFCache, err = cfg.hfCache(); err != nil {
		return Request{}, err
	}
	if cfg.HFToken != "" {
		r.Env[EnvHFToken] = cfg.HFToken
	}
	// Keep the server from phoning home: only the model download leaves
	// the machine, and only on runners that allow it.
	r.Env["VLLM_NO_USAGE_STATS"] = "1"
	r.Env["DO_NOT_TRACK"] = "1"
	return r, nil
}

// Options turns the request into testcontainers-go options, to follow any
// module defaults in testcontainers.Run.
func (r Request) Options() []testcontainers.ContainerCustomizer {
	env := map[string]string{}
	for k, v := range r.Env {
		env[k] = v.Reveal()
	}
	health := wait.ForHTTP("/health").
		WithPort(ContainerPort).
		WithStartupTimeout(r.StartupTimeout).
		WithPollInterval(250 * time.Millisecond)
	return []testcontainers.ContainerCustomizer{
		testcontainers.WithEntrypoint(r.Entrypoint...),
		testcontainers.WithCmd(r.Cmd...),
		testcontainers.WithEnv(env),
		testcontainers.WithLabels(r.Labels),
		testcontainers.WithExposedPorts(ContainerPort),
		testcontainers.WithHostConfigModifier(r.modifyHostConfig),
		// Not WithWaitStrategy: it caps the wait at 60 s whatever the
		// strategy's own timeout (vllm-reference.md §4).
		testcontainers.WithWaitStrategyAndDeadline(r.StartupTimeout, health),
	}
}

// modifyHostConfig applies GPUs, --ipc=host, the cache mount and a
// loopback-only port binding.
func (r Request) modifyHostConfig(hc *container.HostConfig) {
	switch {
	case r.GPUs.All:
		hc.DeviceRequests = append(hc.DeviceRequests, container.DeviceRequest{Count: -1, Capabilities: [][]string{{"gpu"}}})
	case len(r.GPUs.IDs) > 0:
		hc.DeviceRequests = append(hc.DeviceRequests, container.DeviceRequest{DeviceIDs: r.GPUs.IDs, Capabilities: [][]string{{"gpu"}}})
	}
	if r.IPCHost {
		hc.IpcMode = container.IPCModeHost
	}
	if r.HFCache != "" {
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: r.HFCache, Target: ContainerHFCache})
	}
	// Publish the API on loopback only: nothing but this machine reaches it.
	port := network.MustParsePort(ContainerPort)
	if hc.PortBindings == nil {
		hc.PortBindings = network.PortMap{}
	}
	hc.PortBindings[port] = []network.PortBinding{{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: "0"}}
}

// Start starts a container for p and waits for /health. A container that
// exits (a flag vLLM rejects) fails at once with its last log lines; the
// container is removed on every failure.
func (b *ContainerBackend) Start(ctx context.Context, p profile.Profile) (Server, error) {
	PrepareEnvironment()
	req, err := BuildRequest(b.cfg, p)
	if err != nil {
		return nil, fmt.Errorf("start vllm: %w", err)
	}
	if b.cfg.IsSimImage() {
		if err := ensureSimImage(ctx, b.cfg); err != nil {
			return nil, fmt.Errorf("start vllm: simulator image: %w", err)
		}
	} else if err := ensureImage(ctx, b.cfg, req.Image); err != nil {
		return nil, fmt.Errorf("start vllm: %w", err)
	}
	if req.HFCache != "" {
		if err := os.MkdirAll(req.HFCache, 0o755); err != nil {
			return nil, fmt.Errorf("start vllm: Hugging Face cache %s: %w (set %s)", req.HFCache, err, EnvHFCache)
		}
	}
	// Time to ready counts from here: the image is local (built, or pulled
	// by the caller beforehand), the rest is the server's cold start.
	begin := time.Now()
	logs := newLineRing(b.cfg.redact)
	opts := append(req.Options(),
		testcontainers.WithLogger(redactLogger{cfg: b.cfg}),
		testcontainers.WithLogConsumers(ringConsumer{logs}),
	)
	b.cfg.logf("vllm container: starting profile %s: %s", req.Profile, req)
	c, err := testcontainers.Run(ctx, req.Image, opts...)
	if err != nil {
		lines := containerLogs(c, logs)
		rmErr := remove(c)
		return nil, b.startError(req, err, lines, rmErr)
	}
	host, err := c.Host(ctx)
	if err == nil && (host == "localhost" || host == "") {
		host = "127.0.0.1"
	}
	var port network.Port
	if err == nil {
		port, err = c.MappedPort(ctx, ContainerPort)
	}
	if err != nil {
		rmErr := remove(c)
		return nil, b.startError(req, err, logs.Last(failureLogLines), rmErr)
	}
	s := &containerServer{
		c:     c,
		base:  "http://" + net.JoinHostPort(host, port.Port()),
		model: req.ServedModel,
		ready: time.Since(begin),
		logs:  logs,
	}
	b.cfg.logf("vllm container: profile %s ready in %s at %s (container %.12s)", req.Profile, s.ready.Round(time.Millisecond), s.base, c.GetContainerID())
	return s, nil
}

// ensureImage pulls img when it is not local, so that the pull (minutes
// for a vLLM image) is not counted in the time to ready.
func ensureImage(ctx context.Context, cfg Config, img string) error {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return fmt.Errorf("docker: %w", err)
	}
	defer cli.Close()
	if _, err := cli.ImageInspect(ctx, img); err == nil {
		return nil
	}
	provider, err := testcontainers.NewDockerProvider(testcontainers.WithLogger(redactLogger{cfg: cfg}))
	if err != nil {
		return fmt.Errorf("docker: %w", err)
	}
	defer provider.Close()
	begin := time.Now()
	cfg.logf("vllm container: pulling %s (not counted in the time to ready)", img)
	if err := provider.PullImage(ctx, img); err != nil {
		return fmt.Errorf("pull %s: %w (pull it beforehand with docker pull, or set %s to a local image)", img, err, EnvImage)
	}
	cfg.logf("vllm container: pulled %s in %s", img, time.Since(begin).Round(time.Second))
	return nil
}

// startError builds the error of a failed start: what failed, the
// argparse complaint when vLLM rejected a flag, the last log lines.
func (b *ContainerBackend) startError(req Request, err error, lines []string, rmErr error) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "start vllm: profile %s in %s: %s", req.Profile, req.Image, b.cfg.redact(err.Error()))
	if why := argparseError(lines); why != "" {
		fmt.Fprintf(&sb, "\nvLLM rejected its command line: %s", why)
	}
	if len(lines) > 0 {
		fmt.Fprintf(&sb, "\nlast %d log lines of the container:\n  %s", len(lines), strings.Join(lines, "\n  "))
	}
	if rmErr != nil {
		fmt.Fprintf(&sb, "\nremoving the container failed too: %v (find it with docker ps -a --filter label=%s=true)", rmErr, LabelManaged)
	}
	return &StartError{msg: sb.String(), err: err, Logs: lines}
}

// StartError is a failed container start; it carries the container's last
// log lines.
type StartError struct {
	msg  string
	err  error
	Logs []string // the container's last log lines, redacted
}

func (e *StartError) Error() string { return e.msg }
func (e *StartError) Unwrap() error { return e.err }

// argparseError picks the line where vLLM's argument parser says what it
// rejected ("vllm serve: error: unrecognized arguments: --max-num-seq 8").
func argparseError(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		if strings.Contains(l, ": error: ") || strings.Contains(l, "unrecognized arguments") {
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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
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
	return testcontainers.TerminateContainer(c, testcontainers.StopContext(ctx), testcontainers.StopTimeout(5*time.Second))
}

// containerServer is a running container.
type containerServer struct {
	c           *testcontainers.DockerContainer
	base, model string
	ready       time.Duration
	logs        *lineRing
	once        sync.Once
	err         error
}

func (s *containerServer) BaseURL() string        { return s.base }
func (s *containerServer) MetricsURL() string     { return s.base + "/metrics" }
func (s *containerServer) Model() string          { return s.model }
func (s *containerServer) ReadyIn() time.Duration { return s.ready }
func (s *containerServer) Logs(n int) []string    { return s.logs.Last(n) }

// ContainerID returns the Docker container id.
func (s *containerServer) ContainerID() string { return s.c.GetContainerID() }

// Close stops and removes the container. It runs on its own bounded
// context so that removal happens also when ctx is already done.
func (s *containerServer) Close(ctx context.Context) error {
	s.once.Do(func() {
		err := remove(s.c)
		if err != nil {
			s.err = fmt.Errorf("remove container %.12s: %w", s.c.GetContainerID(), err)
		}
	})
	return s.err
}

// ringConsumer feeds container output into a lineRing.
type ringConsumer struct{ r *lineRing }

// Accept implements testcontainers.LogConsumer.
func (c ringConsumer) Accept(l testcontainers.Log) { _, _ = c.r.Write(l.Content) }

// redactLogger passes testcontainers' own messages to Config.Log with
// secrets redacted.
type redactLogger struct{ cfg Config }

// Printf implements testcontainers' log.Logger.
func (l redactLogger) Printf(format string, v ...any) {
	l.cfg.logf("testcontainers: "+format, v...)
}

var (
	sessionOnce sync.Once
	sessionID   string
)

// Session is this process's session id, put on every container it starts
// (LabelSession) so that Reap can remove exactly this process's leftovers.
func Session() string {
	sessionOnce.Do(func() {
		sessionID = fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	})
	return sessionID
}

// Reap force-removes the containers carrying LabelManaged (and, when
// session is not empty, LabelSession=session): the ones an interrupted or
// killed run left behind. It returns how many it removed.
func Reap(ctx context.Context, session string) (int, error) {
	PrepareEnvironment()
	ids, err := ListManaged(ctx, session)
	if err != nil {
		return 0, err
	}
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return 0, fmt.Errorf("docker: %w", err)
	}
	defer cli.Close()
	var errs []error
	n := 0
	for _, id := range ids {
		if _, err := cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
			errs = append(errs, fmt.Errorf("remove %.12s: %w", id, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// ListManaged lists the ids of containers (running or not) that carry
// LabelManaged, and LabelSession=session when session is not empty.
func ListManaged(ctx context.Context, session string) ([]string, error) {
	PrepareEnvironment()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	defer cli.Close()
	f := make(client.Filters).Add("label", LabelManaged+"=true")
	if session != "" {
		f = f.Add("label", LabelSession+"="+session)
	}
	res, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("docker: list containers: %w", err)
	}
	var ids []string
	for _, c := range res.Items {
		ids = append(ids, c.ID)
	}
	return ids, nil
}

// DockerAvailable reports whether a Docker engine answers, with the reason
// when not.
func DockerAvailable(ctx context.Context) error {
	PrepareEnvironment()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	_, err = cli.Ping(ctx, client.PingOptions{})
	return err
}

var _ io.Writer = (*lineRing)(nil)
