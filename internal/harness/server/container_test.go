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

	"github.com/vllmperf/vllmperf/internal/harness/profile"
)

// fakeToken stands for a Hugging Face token; it must never be printed.
const fakeToken = "hf_TESTsecretTOKEN0123456789"

// applyOptions runs the request's testcontainers options on a fresh
// request, as testcontainers.Run does, and returns the request and the
// HostConfig its modifier produces.
func applyOptions(t *testing.T, r Request) (testcontainers.GenericContainerRequest, container.HostConfig) {
	t.Helper()
	req := testcontainers.GenericContainerRequest{ContainerRequest: testcontainers.ContainerRequest{Image: r.Image}, Started: true}
	for _, o := range r.Options() {
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
		cfg        Config
		entrypoint []string
		cmdHead    []string // the command's first elements
		devices    []container.DeviceRequest
	}{
		// Defaults: pinned image, vllm serve with the model positional, all GPUs.
		{"defaults", Config{Backend: KindContainer},
			[]string{"vllm", "serve"}, []string{profile.DefaultModel, "--host", "0.0.0.0", "--port", "8000"},
			[]container.DeviceRequest{{Count: -1, Capabilities: [][]string{{"gpu"}}}}},
		// Two device ids, model overridden.
		{"device ids", Config{Backend: KindContainer, GPUs: "0,1", Model: "org/big"},
			[]string{"vllm", "serve"}, []string{"org/big", "--host", "0.0.0.0"},
			[]container.DeviceRequest{{DeviceIDs: []string{"0", "1"}, Capabilities: [][]string{{"gpu"}}}}},
		// No GPUs; the old python entrypoint with --model.
		{"none, api_server", Config{Backend: KindContainer, GPUs: "none", Entrypoint: EntrypointAPIServer},
			[]string{"python3", "-m", "vllm.entrypoints.openai.api_server"}, []string{"--model", profile.DefaultModel, "--host"},
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.HFToken = fakeToken
			tt.cfg.HFCache = "/data/hf-cache"
			r, err := BuildRequest(tt.cfg, p)
			if err != nil {
				t.Fatal(err)
			}
			if r.Image != DefaultImage {
				t.Errorf("image = %q, want %q", r.Image, DefaultImage)
			}
			if !slices.Equal(r.Entrypoint, tt.entrypoint) {
				t.Errorf("entrypoint = %q, want %q", r.Entrypoint, tt.entrypoint)
			}
			if !slices.Equal(r.Cmd[:len(tt.cmdHead)], tt.cmdHead) {
				t.Errorf("cmd = %q, want it to start %q", r.Cmd, tt.cmdHead)
			}
			if got, want := strings.Join(r.Cmd, " "), strings.Join(p.Args(), " "); !strings.HasSuffix(got, want) {
				t.Errorf("cmd %q does not end with the profile's flags %q", got, want)
			}
			req, hc := applyOptions(t, r)
			if !slices.Equal(req.Entrypoint, tt.entrypoint) || !slices.Equal(req.Cmd, r.Cmd) {
				t.Errorf("options: entrypoint %q cmd %q", req.Entrypoint, req.Cmd)
			}
			if fmt.Sprint(hc.DeviceRequests) != fmt.Sprint(tt.devices) {
				t.Errorf("device requests = %+v, want %+v", hc.DeviceRequests, tt.devices)
			}
			if hc.IpcMode != container.IPCModeHost {
				t.Errorf("IpcMode = %q, want host", hc.IpcMode)
			}
			wantMount := mount.Mount{Type: mount.TypeBind, Source: "/data/hf-cache", Target: ContainerHFCache}
			if len(hc.Mounts) != 1 || hc.Mounts[0] != wantMount {
				t.Errorf("mounts = %+v, want [%+v]", hc.Mounts, wantMount)
			}
			b := hc.PortBindings[network.MustParsePort(ContainerPort)]
			if len(b) != 1 || b[0].HostIP.String() != "127.0.0.1" {
				t.Errorf("port bindings = %+v, want 8000/tcp on 127.0.0.1 only", hc.PortBindings)
			}
			if got := req.Env[EnvHFToken]; got != fakeToken {
				t.Errorf("container env HF_TOKEN = %q, want the token", got)
			}
			if req.Env["VLLM_NO_USAGE_STATS"] != "1" {
				t.Errorf("usage stats not disabled: %v", req.Env["VLLM_NO_USAGE_STATS"])
			}
			if req.Labels[LabelManaged] != "true" || req.Labels[LabelProfile] != "high-throughput" || req.Labels[LabelSession] != Session() {
				t.Errorf("labels = %v", req.Labels)
			}
			ms, ok := req.WaitingFor.(*wait.MultiStrategy)
			if !ok {
				t.Fatalf("wait strategy %T, want *wait.MultiStrategy", req.WaitingFor)
			}
			// The deadline is unexported; reflect may read it.
			dl := reflect.ValueOf(ms).Elem().FieldByName("deadline")
			if !dl.IsValid() || dl.IsNil() || time.Duration(dl.Elem().Int()) != DefaultStartupTimeout {
				t.Errorf("wait deadline = %v, want %s (not testcontainers' 60 s)", dl, DefaultStartupTimeout)
			}
			if len(ms.Strategies) != 1 {
				t.Fatalf("wait strategies = %d, want 1 (/health)", len(ms.Strategies))
			}
			hs, ok := ms.Strategies[0].(*wait.HTTPStrategy)
			if !ok || hs.Path != "/health" || hs.Port.String() != ContainerPort {
				t.Errorf("wait strategy = %#v, want HTTP /health on %s", ms.Strategies[0], ContainerPort)
			} else if d := hs.Timeout(); d == nil || *d != DefaultStartupTimeout {
				t.Errorf("/health timeout = %v, want %s", d, DefaultStartupTimeout)
			}
			// The token is in the container env and nowhere printable.
			for what, s := range map[string]string{
				"Request.String": r.String(), "Request %+v": fmt.Sprintf("%+v", r), "Request %#v": fmt.Sprintf("%#v", r),
				"Config.String": tt.cfg.String(), "Config %+v": fmt.Sprintf("%+v", tt.cfg), "Config %#v": fmt.Sprintf("%#v", tt.cfg),
			} {
				if strings.Contains(s, fakeToken) {
					t.Errorf("%s shows the token: %s", what, s)
				}
			}
			if !strings.Contains(r.String(), "HF_TOKEN=[REDACTED]") {
				t.Errorf("Request.String() = %s, want HF_TOKEN=[REDACTED]", r)
			}
		})
	}
}

// TestBuildRequestSimImage checks the simulator image's layout: no GPUs,
// no cache, no token, the short start-up deadline, sim flags included.
func TestBuildRequestSimImage(t *testing.T) {
	p, err := profile.Builtin("low-latency")
	if err != nil {
		t.Fatal(err)
	}
	p.SimFlags = []profile.Flag{{Name: "sim-seed", Value: "3"}}
	r, err := BuildRequest(Config{Backend: KindContainer, Image: SimImage, HFToken: fakeToken}, p)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string{profile.DefaultModel, "--host", "0.0.0.0", "--port", "8000"}, p.SimArgs()...)
	if r.Image != simImageTag || !slices.Equal(r.Entrypoint, []string{"/vllm-sim"}) || !slices.Equal(r.Cmd, want) {
		t.Errorf("got image %q entrypoint %q cmd %q; want %q [/vllm-sim] %q", r.Image, r.Entrypoint, r.Cmd, simImageTag, want)
	}
	if r.GPUs.All || len(r.GPUs.IDs) > 0 || r.HFCache != "" || len(r.Env) != 0 {
		t.Errorf("sim image got GPUs %+v, cache %q, env %v; want none", r.GPUs, r.HFCache, r.Env)
	}
	if r.StartupTimeout != DefaultSimStartupTimeout {
		t.Errorf("startup timeout = %s, want %s", r.StartupTimeout, DefaultSimStartupTimeout)
	}
}

// TestRedaction checks that progress logs, testcontainers' messages and
// start errors never carry the token.
func TestRedaction(t *testing.T) {
	var buf bytes.Buffer
	cfg := Config{Backend: KindContainer, HFToken: fakeToken, Log: &buf}
	redactLogger{cfg: cfg}.Printf("env %v", []string{"HF_TOKEN=" + fakeToken})
	cfg.logf("request %s", "HF_TOKEN="+fakeToken)
	b := &ContainerBackend{cfg: cfg}
	err := b.startError(Request{Profile: "basic", Image: "img"}, errors.New("failed with "+fakeToken), []string{"line"}, nil)
	out := buf.String() + err.Error()
	if strings.Contains(out, fakeToken) {
		t.Fatalf("token leaked:\n%s", out)
	}
	if got := strings.Count(out, "[REDACTED]"); got != 3 {
		t.Errorf("want 3 redactions, got %d:\n%s", got, out)
	}
	ring := newLineRing(cfg.redact)
	fmt.Fprintf(ring, "token=%s\npartial %s", fakeToken, fakeToken)
	if s := strings.Join(ring.Last(10), "\n"); strings.Contains(s, fakeToken) {
		t.Errorf("log ring leaked the token: %s", s)
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
func startSimContainer(t *testing.T, p profile.Profile, timeout time.Duration) (Server, error) {
	t.Helper()
	var logBuf bytes.Buffer
	// VLLMPERF_SIM_BINARY may name a prebuilt simulator; else it is built.
	b, err := New(Config{Backend: KindContainer, Image: SimImage, StartupTimeout: timeout, Log: &logBuf, SimBinary: os.Getenv(EnvSimBinary)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := b.Start(ctx, p)
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
			s, err := startSimContainer(t, p, DefaultSimStartupTimeout)
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
			if s.ReadyIn() <= 0 || s.ReadyIn() > DefaultSimStartupTimeout {
				t.Errorf("ReadyIn = %s, want within (0, %s]", s.ReadyIn(), DefaultSimStartupTimeout)
			}
			res := streamChat(t, s.BaseURL(), s.Model())
			checkStream(t, res)
			t.Logf("profile %s: time-to-ready %s; %s", name, s.ReadyIn().Round(time.Millisecond), res)
			if id := s.(*containerServer).ContainerID(); id == "" {
				t.Error("no container id")
			}
		})
	}
}

// TestContainerBadFlagFailsFast checks that a flag the server rejects
// fails the start at once, names the flag, and leaves no container.
func TestContainerBadFlagFailsFast(t *testing.T) {
	needDocker(t)
	p, err := profile.Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithExtraArgs("--max-num-seq", "8")
	begin := time.Now()
	// A start-up deadline far above the failure time: only the exit
	// detection can make this fast.
	s, err := startSimContainer(t, p, 2*time.Minute)
	took := time.Since(begin)
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
	var se *StartError
	if !errors.As(err, &se) || len(se.Logs) == 0 {
		t.Errorf("error %T carries no log lines", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	left, err := ListManaged(ctx, Session())
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
	s, err := startSimContainer(t, withSimStartup(t, 1500*time.Millisecond), DefaultSimStartupTimeout)
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
	buildSimImage(t) // outside the short contexts below
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := New(Config{Backend: KindContainer, Image: SimImage, StartupTimeout: tt.deadline, SimBinary: os.Getenv(EnvSimBinary)})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), tt.ctxAfter)
			defer cancel()
			begin := time.Now()
			s, err := b.Start(ctx, p)
			if err == nil {
				s.Close(context.Background())
				t.Fatal("started although /health never turned 200 in time")
			}
			if took := time.Since(begin); took > 30*time.Second {
				t.Errorf("took %s to give up", took)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "start vllm: ") {
				t.Errorf("error lacks %q: %v", tt.want, err)
			}
			lctx, lcancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer lcancel()
			left, err := ListManaged(lctx, Session())
			if err != nil {
				t.Fatal(err)
			}
			if len(left) > 0 {
				t.Errorf("abandoned start left %d container(s): %v", len(left), left)
			}
		})
	}
}

// buildSimImage builds the simulator image (once per process) on a
// generous context.
func buildSimImage(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := ensureSimImage(ctx, Config{SimBinary: os.Getenv(EnvSimBinary)}); err != nil {
		t.Fatal(err)
	}
}
