package llmd

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/vllmperf/vllmperf/internal/target/server"
)

// TestCommandLine checks the arguments Start gives the simulator.
func TestCommandLine(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    []string
		wantErr string
	}{
		// Nothing given: offline, the default model.
		{"defaults", nil, []string{"--port", "8123", OfflineFlag, "--model", DefaultModel}, ""},
		// The caller's model, and flags after ours so that theirs win.
		{"model and flags", []string{"--model", "m", "--max-num-seqs", "4"},
			[]string{"--port", "8123", OfflineFlag, "--model", "m", "--max-num-seqs", "4"}, ""},
		// --model=NAME counts as a model too.
		{"model=", []string{"--model=m"}, []string{"--port", "8123", OfflineFlag, "--model=m"}, ""},
		// Start picks the port: a caller's --port is refused.
		{"port", []string{"--port", "9"}, nil, `drop "--port"`},
		// In its = form too.
		{"port=", []string{"--port=9"}, nil, `drop "--port=9"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := commandLine(8123, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("commandLine(%q) = %q, %v; want %q", tt.args, got, err, tt.want)
			}
		})
	}
}

// TestStartRefusesPortFirst: a bad argument fails before anything is built.
func TestStartRefusesPortFirst(t *testing.T) {
	t.Setenv(EnvBinary, filepath.Join(t.TempDir(), "missing"))
	if _, err := Start(context.Background(), "--port", "1"); err == nil || !strings.Contains(err.Error(), "picks the port") {
		t.Fatalf("err = %v, want the --port refusal", err)
	}
}

// TestModulePathOf reads a go.mod's module line.
func TestModulePathOf(t *testing.T) {
	tests := []struct {
		gomod, want string
	}{
		// The main module, after a comment.
		{"// x\nmodule github.com/vllmperf/vllmperf\n\ngo 1.26\n", mainModule},
		// Quoted.
		{"module \"github.com/vllmperf/vllmperf\"\n", mainModule},
		// The tools module is another module.
		{"module github.com/vllmperf/vllmperf/tools/llmd\n", "github.com/vllmperf/vllmperf/tools/llmd"},
		// No module line.
		{"go 1.26\n", ""},
	}
	for _, tt := range tests {
		if got := modulePathOf([]byte(tt.gomod)); got != tt.want {
			t.Errorf("modulePathOf(%q) = %q, want %q", tt.gomod, got, tt.want)
		}
	}
}

// TestVersionPinned: tools/llmd/go.mod pins Version and has Package as its
// tool, so that Binary builds what Version says.
func TestVersionPinned(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, toolsDir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var require, tool bool
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 2 && f[0] == ModulePath:
			require = f[1] == Version
			if !require {
				t.Errorf("%s/go.mod requires %s %s, llmd.Version is %s", toolsDir, ModulePath, f[1], Version)
			}
		case len(f) == 2 && f[0] == "tool" && f[1] == Package:
			tool = true
		}
	}
	if !require || !tool {
		t.Errorf("%s/go.mod: require %s %s found %v, tool %s found %v", toolsDir, ModulePath, Version, require, Package, tool)
	}
	if got := modulePathOf(data); got != mainModule+"/"+toolsDir {
		t.Errorf("%s/go.mod declares module %q", toolsDir, got)
	}
}

// TestOutsideCheckout: outside the vllmperf checkout there is nothing to
// build from, and the error says what to set.
func TestOutsideCheckout(t *testing.T) {
	t.Chdir(t.TempDir())
	if _, err := moduleRoot(); err == nil || !strings.Contains(err.Error(), EnvBinary) || !strings.Contains(err.Error(), "make llmd") {
		t.Errorf("err = %v, want one naming %s and make llmd", err, EnvBinary)
	}
}

// TestCheckFile checks VLLMPERF_LLMD_BINARY's validation.
func TestCheckFile(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "exe")
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plain, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, wantErr string
	}{
		// An executable file is taken as it is.
		{"executable", exe, ""},
		// A file without the executable bit.
		{"not executable", plain, "not an executable file"},
		// A directory.
		{"directory", dir, "not an executable file"},
		// Nothing there: the error says how to make one.
		{"missing", filepath.Join(dir, "none"), "make llmd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := checkFile(tt.path)
			if tt.wantErr == "" {
				if err != nil || got != tt.path {
					t.Errorf("checkFile = %q, %v; want %q", got, err, tt.path)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), EnvBinary) {
				t.Errorf("err = %v, want one naming %s and %q", err, EnvBinary, tt.wantErr)
			}
		})
	}
}

// TestUpToDateRefusesOthers: a binary that is not llm-d-inference-sim
// Version (this test binary, a missing file) is rebuilt.
func TestUpToDateRefusesOthers(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := upToDate(self, "linux", "amd64"); err == nil || !strings.Contains(err.Error(), "want "+ModulePath) {
		t.Errorf("upToDate(test binary) = %v, want a module mismatch", err)
	}
	if err := upToDate(filepath.Join(t.TempDir(), "none"), "linux", "amd64"); err == nil {
		t.Error("upToDate(missing file) = nil")
	}
}

// TestCheckStaticLinuxRefusesGarbage: what is not an ELF executable
// cannot go into the image.
func TestCheckStaticLinuxRefusesGarbage(t *testing.T) {
	if err := checkStaticLinux([]byte("#!/bin/sh\necho hi\n")); err == nil || !strings.Contains(err.Error(), "not a Linux executable") {
		t.Errorf("err = %v", err)
	}
}

// TestLineRing keeps the newest lines and the unterminated tail.
func TestLineRing(t *testing.T) {
	r := newLineRing(2)
	fmt.Fprint(r, "a\nb\r\nc\npart")
	if got, want := r.Last(0), []string{"b", "c", "part"}; !slices.Equal(got, want) {
		t.Errorf("Last(0) = %q, want %q", got, want)
	}
	if got, want := r.Last(1), []string{"part"}; !slices.Equal(got, want) {
		t.Errorf("Last(1) = %q, want %q", got, want)
	}
}

// needBinary skips (fails under CI=true) where the binary cannot be had.
func needBinary(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), BuildTimeout)
	defer cancel()
	path, err := Binary(ctx)
	if err != nil {
		unavailable(t, "llm-d-inference-sim", err)
	}
	return path
}

// TestBinaryIsStaticPinned: the binary Binary returns is the pinned
// release, static, for this machine (unless VLLMPERF_LLMD_BINARY names
// another, which is taken as it is).
func TestBinaryIsStaticPinned(t *testing.T) {
	path := needBinary(t)
	if os.Getenv(EnvBinary) != "" {
		t.Skipf("%s is set: the binary is the caller's", EnvBinary)
	}
	if err := upToDate(path, runtime.GOOS, runtime.GOARCH); err != nil {
		t.Errorf("%s: %v", path, err)
	}
	if runtime.GOOS != "linux" {
		return
	}
	bin, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkStaticLinux(bin); err != nil {
		t.Errorf("%s: %v", path, err)
	}
}

// TestStartStreamsUsage starts the simulator and streams one chat
// completion through plain net/http: the usage chunk comes when asked for
// (stream_options.include_usage), and with ignore_eos exactly max_tokens
// tokens arrive, one content chunk each, after a role-only first chunk.
func TestStartStreamsUsage(t *testing.T) {
	p := StartT(t, "--max-num-seqs", "4", "--max-model-len", "512", "--time-to-first-token", "5ms", "--inter-token-latency", "1ms")
	if p.Model() != DefaultModel || !strings.HasPrefix(p.BaseURL(), "http://127.0.0.1:") {
		t.Fatalf("model %q base %q", p.Model(), p.BaseURL())
	}
	const maxTokens = 8
	body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"Hello there"}],"max_tokens":%d,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`, p.Model(), maxTokens)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, p.BaseURL()+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %s: %s", resp.Status, b)
	}
	var (
		content, roleOnly int
		finish            string
		usage             *struct{ PromptTokens, CompletionTokens int }
		done              bool
	)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			done = true
			break
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Role    string  `json:"role"`
					Content *string `json:"content"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *struct {
				PromptTokens     int `json:"prompt_tokens"`
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		if chunk.Usage != nil {
			usage = &struct{ PromptTokens, CompletionTokens int }{chunk.Usage.PromptTokens, chunk.Usage.CompletionTokens}
		}
		for _, c := range chunk.Choices {
			switch {
			case c.Delta.Content != nil && *c.Delta.Content != "":
				content++
			case c.Delta.Role != "":
				roleOnly++
			}
			if c.FinishReason != nil {
				finish = *c.FinishReason
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !done || usage == nil {
		t.Fatalf("stream ended without [DONE] (%v) or usage (%v)", done, usage)
	}
	if usage.CompletionTokens != maxTokens || content != maxTokens || usage.PromptTokens <= 0 {
		t.Errorf("usage %+v, %d content chunks; want %d completion tokens in as many chunks", *usage, content, maxTokens)
	}
	if roleOnly != 1 || finish != "length" {
		t.Errorf("%d role-only chunks, finish_reason %q; want 1 and length", roleOnly, finish)
	}
}

// TestStartFailsWithOutput: a flag the simulator rejects fails Start at
// once (although the simulator exits 0) with its complaint.
func TestStartFailsWithOutput(t *testing.T) {
	needBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), StartTimeout)
	defer cancel()
	p, err := Start(ctx, "--dtype", "float16")
	if err == nil {
		p.Close()
		t.Fatal("Start with --dtype succeeded; want the simulator's unknown flag")
	}
	for _, want := range []string{"exited before it answered", "unknown flag: --dtype"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// TestCloseReportsCrash: Close kills a running simulator quietly (and
// again is a no-op), and reports one that had exited on its own.
func TestCloseReportsCrash(t *testing.T) {
	needBinary(t)
	for _, crash := range []bool{false, true} {
		p, err := Start(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if crash {
			if err := p.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-p.done
		}
		err = p.Close()
		if got := err != nil && strings.Contains(err.Error(), "exited before Close"); got != crash {
			t.Errorf("crashed %v: Close = %v", crash, err)
		}
		if again := p.Close(); again != err {
			t.Errorf("crashed %v: second Close = %v, first %v", crash, again, err)
		}
	}
}

// TestImage builds the image, twice (the second time from this process's
// memory), checks its ENTRYPOINT keeps the simulator offline, and runs it,
// without any network (--network none) and through the Docker API itself
// (testcontainers would start its reaper), until it says it serves.
// internal/target/server's tests stream through it.
func TestImage(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), BuildTimeout)
	defer cancel()
	if err := server.DockerAvailable(ctx); err != nil {
		unavailable(t, "a Docker engine", err)
	}
	ref, err := Image(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := Image(ctx); err != nil || again != ref || ref != ImageRef {
		t.Fatalf("Image = %q then %q, %v; want %q", ref, again, err, ImageRef)
	}
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	info, err := cli.ImageInspect(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := info.Config.Entrypoint, []string{"/" + binaryName, OfflineFlag}; !slices.Equal(got, want) {
		t.Errorf("ENTRYPOINT = %q, want %q", got, want)
	}
	created, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config:     &container.Config{Image: ref, Cmd: []string{"--model", "m", "--port", "8000"}, Labels: map[string]string{"org.vllmperf.managed": "true"}},
		HostConfig: &container.HostConfig{NetworkMode: "none"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := cli.ContainerRemove(ctx, created.ID, client.ContainerRemoveOptions{Force: true}); err != nil {
			t.Errorf("remove container %.12s: %v", created.ID, err)
		}
	})
	if _, err := cli.ContainerStart(ctx, created.ID, client.ContainerStartOptions{}); err != nil {
		t.Fatal(err)
	}
	logCtx, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	logs, err := cli.ContainerLogs(logCtx, created.ID, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Follow: true})
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	var seen []string
	sc := bufio.NewScanner(logs)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"Server starting" protocol="HTTP" port=8000`) {
			return
		}
		seen = append(seen, sc.Text())
	}
	t.Fatalf("the container never said it serves (%v); its output:\n%s", sc.Err(), lastLines(strings.Join(seen, "\n"), failureLines))
}
