package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vllmperf/vllmperf/internal/simtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRunArgErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		code int
		want string // on stderr
	}{
		// A typo: argparse's message, exit 2.
		{"typo", []string{"--max-num-seq", "4"}, 2, "vllm-sim: error: unrecognized arguments: --max-num-seq 4 (see --help; did you mean --max-num-seqs?)"},
		// A bad value: exit 2.
		{"bad rate", []string{"--sim-fault-429-rate", "2"}, 2, "argument --sim-fault-429-rate"},
		// A negative port (argparse reads "-1" as a value, not a flag).
		{"bad port", []string{"--port", "-1"}, 2, "argument --port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, &stdout, &stderr)
			if got := exitCode(err); got != tt.code {
				t.Errorf("exit code %d, want %d (err %v)", got, tt.code, err)
			}
			if !strings.Contains(stderr.String(), tt.want) || !strings.HasPrefix(stderr.String(), "usage: vllm-sim") {
				t.Errorf("stderr %q\nwant usage line and %q", stderr.String(), tt.want)
			}
		})
	}
}

func TestRunHelp(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"--help"}, &stdout, &stderr); exitCode(err) != 0 {
		t.Fatalf("--help: %v", err)
	}
	for _, f := range []string{"--max-num-seqs", "--api-key", "--sim-fault-die-after", "--no-enable-prefix-caching", "-tp"} {
		if !strings.Contains(stdout.String(), f) {
			t.Errorf("--help does not list %s", f)
		}
	}
}

var listenLine = regexp.MustCompile(`Starting vLLM server on http://(127\.0\.0\.1:\d+)`)

func TestRunServes(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr simtest.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"Qwen/Qwen3-0.6B", "--host", "127.0.0.1", "--port", "0", "--api-key", "k-123", "--sim-fixed-ttft", "2ms", "--sim-fixed-itl", "1ms"}, &stdout, &stderr)
	}()
	var addr string
	deadline := time.Now().Add(10 * time.Second)
	for addr == "" && time.Now().Before(deadline) {
		if m := listenLine.FindStringSubmatch(stdout.String()); m != nil {
			addr = m[1]
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if addr == "" {
		cancel()
		<-done
		t.Fatalf("no listen line in the log:\n%s%s", stdout.String(), stderr.String())
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/completions", strings.NewReader(`{"prompt":"hello world","max_tokens":3,"ignore_eos":true}`))
	req.Header.Set("Authorization", "Bearer k-123")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"completion_tokens":3`) {
		t.Errorf("completion: %d %s", resp.StatusCode, body)
	}
	cancel()
	select {
	case err := <-done:
		if exitCode(err) != 0 {
			t.Errorf("run after cancel: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return after its context was cancelled")
	}
	log := stdout.String()
	for _, want := range []string{"Application startup complete.", "Application shutdown complete."} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log+stderr.String(), "k-123") {
		t.Error("the API key appears in the output")
	}
}

// TestStaticBuild builds the binary as the scratch image needs it.
func TestStaticBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	out := filepath.Join(t.TempDir(), "vllm-sim")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "build", "-trimpath", "-o", out, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, b)
	}
	help, err := exec.CommandContext(ctx, out, "--help").Output()
	if err != nil || !strings.Contains(string(help), "--sim-startup") {
		t.Errorf("built binary --help: %v\n%s", err, help)
	}
	if code := exec.CommandContext(ctx, out, "--bogus").Run(); code == nil {
		t.Error("built binary accepted --bogus")
	} else if ee, ok := code.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf("built binary --bogus: %v, want exit status 2", code)
	}
}

// TestRunPortTaken: a port already in use is exit status 1 with a hint.
func TestRunPortTaken(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	var stdout, stderr bytes.Buffer
	err = run(context.Background(), []string{"--host", "127.0.0.1", "--port", port}, &stdout, &stderr)
	if exitCode(err) != 1 || !strings.Contains(stderr.String(), "pick one with --port") {
		t.Errorf("exit %d, stderr %q: want 1 and a hint at --port", exitCode(err), stderr.String())
	}
}
