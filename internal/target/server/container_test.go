package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server/simbuild"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// fakeToken and fakeKey stand for a Hugging Face token and an API key;
// they must never be printed.
const (
	fakeToken = "hf_TESTsecretTOKEN0123456789"
	fakeKey   = "sk-TESTsecretKEY9876543210"
)

// applyOptions runs the request's testcontainers options on a fresh
// request, as testcontainers.Run does, and returns the request and the
// HostConfig its modifier produces.
func applyOptions(t *testing.T, r containerRequest) (testcontainers.GenericContainerRequest, container.HostConfig) {
	t.Helper()
	req := testcontainers.GenericContainerRequest{ContainerRequest: testcontainers.ContainerRequest{Image: r.image}, Started: true}
	for _, o := range r.options() {
		if err := o.Customize(&req); err != nil {
			t.Fatalf("customize: %v", err)
		}
	}
	var hc container.HostConfig
	if req.HostConfigModifier == nil {
		t.Fatal("no HostConfigModifier")
	}
	req.HostConfigModifier(&hc)
	return req, hc
}

// TestBuildRequestVLLMImage checks the container laid out for the real
// vLLM image: entrypoint and arguments, GPUs, IPC, the cache mount, the
// loopback port, the long start-up deadline and the token in env only.
func TestBuildRequestVLLMImage(t *testing.T) {
	p, err := profile.Builtin("high-throughput")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		opts       []Option
		entrypoint []string
		cmdHead    []string // the command's first elements
		wholeHead  bool     // cmdHead is all that comes before the profile's flags
		devices    []container.DeviceRequest
	}{
		// Defaults: pinned image, vllm serve with the model positional, all GPUs.
		{"defaults", []Option{WithBackend(KindContainer)},
			[]string{"vllm", "serve"}, []string{profile.DefaultModel, "--host", "0.0.0.0", "--port", "8000"}, true,
			[]container.DeviceRequest{{Count: -1, Capabilities: [][]string{{"gpu"}}}}},
		// Two device ids, model overridden.
		{"device ids", []Option{WithBackend(KindContainer), withGPUs("0,1"), WithModel("org/big")},
			[]string{"vllm", "serve"}, []string{"org/big", "--host", "0.0.0.0"}, false,
			[]container.DeviceRequest{{DeviceIDs: []string{"0", "1"}, Capabilities: [][]string{{"gpu"}}}}},
		// No GPUs; the old python entrypoint with --model.
		{"none, api_server", []Option{WithBackend(KindContainer), withGPUs("none"), WithEntrypoint("api_server")},
			[]string{"python3", "-m", "vllm.entrypoints.openai.api_server"}, []string{"--model", profile.DefaultModel, "--host"}, false,
			nil},
		// A third-party image (llm-d-inference-sim): its own ENTRYPOINT (none
		// set), --model and --port only (it has no --host), then the flags.
		{"image", []Option{WithBackend(KindContainer), WithEntrypoint("image"), withGPUs("none")},
			nil, []string{"--model", profile.DefaultModel, "--port", "8000"}, true,
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := defaultSettings()
			for _, o := range append(tt.opts, withHFToken(fakeToken), withHFCache("/data/hf-cache")) {
				o(&s)
			}
			r, err := buildRequest(s, p)
			if err != nil {
				t.Fatal(err)
			}
			if r.image != DefaultImage {
				t.Errorf("image = %q, want %q", r.image, DefaultImage)
			}
			if !slices.Equal(r.entrypoint, tt.entrypoint) {
				t.Errorf("entrypoint = %q, want %q", r.entrypoint, tt.entrypoint)
			}
			if !slices.Equal(r.cmd[:len(tt.cmdHead)], tt.cmdHead) {
				t.Errorf("cmd = %q, want it to start %q", r.cmd, tt.cmdHead)
			}
			if got, want := strings.Join(r.cmd, " "), strings.Join(p.Args(), " "); !strings.HasSuffix(got, want) {
				t.Errorf("cmd %q does not end with the profile's flags %q", got, want)
			}
			if want := append(slices.Clone(tt.cmdHead), p.Args()...); tt.wholeHead && !slices.Equal(r.cmd, want) {
				t.Errorf("cmd = %q, want %q", r.cmd, want)
			}
			req, hc := applyOptions(t, r)
			if !slices.Equal(req.Entrypoint, tt.entrypoint) || !slices.Equal(req.Cmd, r.cmd) {
				t.Errorf("options: entrypoint %q cmd %q", req.Entrypoint, req.Cmd)
			}
			if fmt.Sprint(hc.DeviceRequests) != fmt.Sprint(tt.devices) {
				t.Errorf("device requests = %+v, want %+v", hc.DeviceRequests, tt.devices)
			}
			if hc.IpcMode != container.IPCModeHost {
				t.Errorf("IpcMode = %q, want host", hc.IpcMode)
			}
			wantMount := mount.Mount{Type: mount.TypeBind, Source: "/data/hf-cache", Target: containerHFCache}
			if len(hc.Mounts) != 1 || hc.Mounts[0] != wantMount {
				t.Errorf("mounts = %+v, want [%+v]", hc.Mounts, wantMount)
			}
			b := hc.PortBindings[network.MustParsePort(containerPortSpec)]
			if len(b) != 1 || b[0].HostIP.String() != "127.0.0.1" {
				t.Errorf("port bindings = %+v, want 8000/tcp on 127.0.0.1 only", hc.PortBindings)
			}
			if got := req.Env[envHFToken]; got != fakeToken {
				t.Errorf("container env HF_TOKEN = %q, want the token", got)
			}
			if req.Env["VLLM_NO_USAGE_STATS"] != "1" {
				t.Errorf("usage stats not disabled: %v", req.Env["VLLM_NO_USAGE_STATS"])
			}
			if req.Labels[labelManaged] != "true" || req.Labels[labelProfile] != "high-throughput" || req.Labels[labelSession] != session() {
				t.Errorf("labels = %v", req.Labels)
			}
			ms, ok := req.WaitingFor.(*wait.MultiStrategy)
			if !ok {
				t.Fatalf("wait strategy %T, want *wait.MultiStrategy", req.WaitingFor)
			}
			// The deadline is unexported; reflect may read it.
			dl := reflect.ValueOf(ms).Elem().FieldByName("deadline")
			if !dl.IsValid() || dl.IsNil() || time.Duration(dl.Elem().Int()) != defaultStartupTimeout {
				t.Errorf("wait deadline = %v, want %s (not testcontainers' 60 s)", dl, defaultStartupTimeout)
			}
			if len(ms.Strategies) != 1 {
				t.Fatalf("wait strategies = %d, want 1 (/health)", len(ms.Strategies))
			}
			hs, ok := ms.Strategies[0].(healthStrategy)
			if !ok || hs.port != containerPortSpec || hs.timeout != defaultStartupTimeout {
				t.Errorf("wait strategy = %#v, want /health on %s within %s", ms.Strategies[0], containerPortSpec, defaultStartupTimeout)
			}
			// The token is in the container env and nowhere printable.
			for what, text := range map[string]string{
				"request.String": r.String(), "request %+v": fmt.Sprintf("%+v", r), "request %#v": fmt.Sprintf("%#v", r),
				"settings %+v": fmt.Sprintf("%+v", s), "settings %#v": fmt.Sprintf("%#v", s),
			} {
				if strings.Contains(text, fakeToken) {
					t.Errorf("%s shows the token: %s", what, text)
				}
			}
			if !strings.Contains(r.String(), "HF_TOKEN=[REDACTED]") {
				t.Errorf("request.String() = %s, want HF_TOKEN=[REDACTED]", r)
			}
		})
	}
}

// TestBuildRequestSimImage checks the simulator image's layout: no GPUs,
// no cache, no token, the short start-up deadline, sim flags included. The
// image is SimImage until runContainer builds (or reuses) the real one.
func TestBuildRequestSimImage(t *testing.T) {
	p, err := profile.Builtin("low-latency")
	if err != nil {
		t.Fatal(err)
	}
	p.SimFlags = []profile.Flag{{Name: "sim-seed", Value: "3"}}
	s := defaultSettings()
	for _, o := range []Option{WithBackend(KindContainer), WithImage(SimImage), withHFToken(fakeToken)} {
		o(&s)
	}
	r, err := buildRequest(s, p)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string{profile.DefaultModel, "--host", "0.0.0.0", "--port", "8000"}, p.SimArgs()...)
	if r.image != SimImage || !slices.Equal(r.entrypoint, []string{"/vllm-sim"}) || !slices.Equal(r.cmd, want) {
		t.Errorf("got image %q entrypoint %q cmd %q; want %q [/vllm-sim] %q", r.image, r.entrypoint, r.cmd, SimImage, want)
	}
	if r.gpus.All || len(r.gpus.IDs) > 0 || r.hfCache != "" || len(r.env) != 0 {
		t.Errorf("sim image got GPUs %+v, cache %q, env %v; want none", r.gpus, r.hfCache, r.env)
	}
	if r.startupTimeout != defaultSimStartupTimeout {
		t.Errorf("startup timeout = %s, want %s", r.startupTimeout, defaultSimStartupTimeout)
	}
}

// TestRedaction checks that progress logs, testcontainers' messages and
// start errors never carry the token or the API key.
func TestRedaction(t *testing.T) {
	var buf bytes.Buffer
	s := defaultSettings()
	for _, o := range []Option{WithBackend(KindContainer), withHFToken(fakeToken), WithAPIKey(fakeKey), WithLog(&buf)} {
		o(&s)
	}
	redactLogger{s}.Printf("env %v", []string{"HF_TOKEN=" + fakeToken})
	s.logf("request %s key %s", "HF_TOKEN="+fakeToken, fakeKey)
	err := newStartFailure(s, containerRequest{profile: "basic", image: "img"}, errors.New("failed with "+fakeToken), []string{"line"}, nil)
	out := buf.String() + err.Error()
	if strings.Contains(out, fakeToken) || strings.Contains(out, fakeKey) {
		t.Fatalf("secret leaked:\n%s", out)
	}
	if got := strings.Count(out, "[REDACTED]"); got != 4 {
		t.Errorf("want 4 redactions, got %d:\n%s", got, out)
	}
	ring := newLineRing(s.redact)
	fmt.Fprintf(ring, "token=%s\npartial %s", fakeToken, fakeToken)
	if text := strings.Join(ring.Last(10), "\n"); strings.Contains(text, fakeToken) {
		t.Errorf("log ring leaked the token: %s", text)
	}
}

// TestArgparseError checks the pick of vLLM's argparse complaint.
func TestArgparseError(t *testing.T) {
	tests := []struct {
		lines []string
		want  string
	}{
		// vLLM's usage line then the error.
		{[]string{"usage: vllm serve [model_tag] [options]", "vllm serve: error: unrecognized arguments: --max-num-seq 8"}, "vllm serve: error: unrecognized arguments: --max-num-seq 8"},
		// A crash without argparse output.
		{[]string{"Traceback (most recent call last):", "RuntimeError: CUDA out of memory"}, ""},
		// A Go server's pflag complaint (llm-d-inference-sim, which exits 0).
		{[]string{`I1203 main.go:38] "Starting vLLM simulator"`, `E1203 main.go:44] "failed to read configuration" err="unknown flag: --dtype"`}, `E1203 main.go:44] "failed to read configuration" err="unknown flag: --dtype"`},
		// No output at all.
		{nil, ""},
	}
	for _, tt := range tests {
		if got := argparseError(tt.lines); got != tt.want {
			t.Errorf("argparseError(%q) = %q, want %q", tt.lines, got, tt.want)
		}
	}
}

// startSimContainer starts p in the simulator image and registers removal.
// The context also bounds the wait for the devices' lease, which another
// test process's container may hold (package lease): generous.
func startSimContainer(t *testing.T, p profile.Profile, timeout time.Duration, opts ...Option) (Server, error) {
	t.Helper()
	var logBuf bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// VLLMPERF_SIM_BINARY may name a prebuilt simulator; else it is built.
	opts = append([]Option{WithBackend(KindContainer), WithImage(SimImage), withStartupTimeout(timeout), WithLog(&logBuf), withSimBinary(os.Getenv(envSimBinary))}, opts...)
	s, err := Run(ctx, p, opts...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("backend log:\n%s", logBuf.String())
		}
	})
	if s != nil {
		t.Cleanup(func() {
			if err := s.Close(context.Background()); err != nil {
				t.Errorf("close: %v", err)
			}
		})
	}
	return s, err
}

// TestContainerProfilesServeStream starts every built-in profile as a
// simulator container and serves a streamed chat request through it.
func TestContainerProfilesServeStream(t *testing.T) {
	needDocker(t)
	for _, name := range profile.Names() {
		t.Run(name, func(t *testing.T) {
			p, err := profile.Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			s, err := startSimContainer(t, p, defaultSimStartupTimeout)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(s.BaseURL(), "http://127.0.0.1:") {
				t.Errorf("BaseURL = %q, want loopback", s.BaseURL())
			}
			if s.MetricsURL() != s.BaseURL()+"/metrics" {
				t.Errorf("MetricsURL = %q", s.MetricsURL())
			}
			if s.Model() != profile.DefaultModel {
				t.Errorf("Model = %q, want %q", s.Model(), profile.DefaultModel)
			}
			if s.ReadyIn() <= 0 || s.ReadyIn() > defaultSimStartupTimeout {
				t.Errorf("ReadyIn = %s, want within (0, %s]", s.ReadyIn(), defaultSimStartupTimeout)
			}
			res := streamChat(t, s.BaseURL(), s.Model())
			checkStream(t, res)
			t.Logf("profile %s: time-to-ready %s; %s", name, s.ReadyIn().Round(time.Millisecond), res)
			if id := s.(*containerServer).containerID(); id == "" {
				t.Error("no container id")
			}
		})
	}
}

// TestContainerBadFlagFailsFast checks that a flag the server rejects
// fails the start at once, names the flag, and leaves no container.
func TestContainerBadFlagFailsFast(t *testing.T) {
	testphase.Fault(t)
	needDocker(t)
	p, err := profile.Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithExtraArgs("--max-num-seq", "8")
	begin := time.Now()
	// A start-up deadline far above the failure time: only the exit
	// detection can make this fast.
	var waited time.Duration // for another process's container (package lease)
	s, err := startSimContainer(t, p, 2*time.Minute, withLeaseWaited(func(d time.Duration) { waited = d }))
	took := time.Since(begin) - waited
	if err == nil {
		t.Fatalf("started %s with a bad flag", s.BaseURL())
	}
	t.Logf("failed in %s: %v", took.Round(time.Millisecond), err)
	if took > 45*time.Second {
		t.Errorf("took %s to fail, want fast (the container exits at once)", took)
	}
	for _, want := range []string{"start vllm:", "--max-num-seq", "profile basic"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	var sf *startFailure
	if !errors.As(err, &sf) || len(sf.logs) == 0 {
		t.Errorf("error %T carries no log lines", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	left, err := listManaged(ctx, session())
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("failed start left %d container(s): %v", len(left), left)
	}
}

// withSimStartup returns the basic profile with the simulator's /health
// held at 503 for d.
func withSimStartup(t *testing.T, d time.Duration) profile.Profile {
	t.Helper()
	p, err := profile.Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	p.SimFlags = append(p.SimFlags, profile.Flag{Name: "sim-startup", Value: d.String()})
	return p
}

// TestContainerReadyInMeasured checks that the time to ready is the
// server's real start-up: a simulator that takes 1.5 s reports at least that.
func TestContainerReadyInMeasured(t *testing.T) {
	needDocker(t)
	s, err := startSimContainer(t, withSimStartup(t, 1500*time.Millisecond), defaultSimStartupTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if s.ReadyIn() < 1500*time.Millisecond {
		t.Errorf("ReadyIn = %s, want >= 1.5s (the simulated start-up)", s.ReadyIn())
	}
	t.Logf("time-to-ready with a 1.5 s start-up: %s", s.ReadyIn().Round(time.Millisecond))
}

// TestContainerStartAbandoned checks that a start that runs past its
// deadline, or whose context is cancelled (an interrupted run), fails in
// time and leaves no container.
func TestContainerStartAbandoned(t *testing.T) {
	testphase.Fault(t)
	needDocker(t)
	tests := []struct {
		name     string
		deadline time.Duration // StartupTimeout
		ctxAfter time.Duration // the caller cancels after this
		want     string
	}{
		// The start-up deadline passes while /health still answers 503.
		{"deadline", 2 * time.Second, time.Minute, "deadline exceeded"},
		// The caller gives up (Ctrl-C in the CLI, a cancelled test).
		{"cancelled", time.Minute, 2 * time.Second, "context"},
	}
	p := withSimStartup(t, time.Minute)
	prepareSimImage(t) // outside the short contexts below
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tt.ctxAfter)
			defer cancel()
			begin := time.Now()
			var waited time.Duration // for another process's container (package lease)
			s, err := Run(ctx, p, WithBackend(KindContainer), WithImage(SimImage), withStartupTimeout(tt.deadline), withSimBinary(os.Getenv(envSimBinary)),
				withLeaseWaited(func(d time.Duration) { waited = d }))
			if err == nil {
				s.Close(context.Background())
				t.Fatal("started although /health never turned 200 in time")
			}
			if took := time.Since(begin) - waited; took > 30*time.Second {
				t.Errorf("took %s to give up", took)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "start vllm: ") {
				t.Errorf("error lacks %q: %v", tt.want, err)
			}
			lctx, lcancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer lcancel()
			left, err := listManaged(lctx, session())
			if err != nil {
				t.Fatal(err)
			}
			if len(left) > 0 {
				t.Errorf("abandoned start left %d container(s): %v", len(left), left)
			}
		})
	}
}

// prepareSimImage builds (or reuses) the simulator image on a generous
// context; the process then knows its tag.
func prepareSimImage(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := simbuild.EnsureSim(ctx, os.Getenv(envSimBinary), t.Logf); err != nil {
		t.Fatal(err)
	}
}
