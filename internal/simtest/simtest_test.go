package simtest_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/simtest"
	"github.com/vllmperf/vllmperf/internal/vllmsim"
)

// newSim builds a simulator with exact, short timings.
func newSim(args []string, log io.Writer) (*vllmsim.Server, error) {
	return vllmsim.New(append([]string{"--sim-fixed-ttft", "2ms", "--sim-fixed-itl", "1ms", "--disable-log-stats"}, args...), log)
}

func TestMain(m *testing.M) {
	if role, args := simtest.Role(); role == simtest.RoleSim {
		os.Exit(simtest.ServeChild(args, func(args []string) (simtest.Server, error) { return newSim(args, io.Discard) }))
	}
	os.Exit(m.Run())
}

// complete sends one completion and returns the status and body.
func complete(t *testing.T, base string) (int, string) {
	t.Helper()
	resp, err := http.Post(base+"/v1/completions", "application/json", strings.NewReader(`{"prompt":"a b","max_tokens":3,"ignore_eos":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestServe serves a simulator in process and logs to a Buffer.
func TestServe(t *testing.T) {
	log := &simtest.Buffer{}
	s, err := newSim(nil, log)
	if err != nil {
		t.Fatal(err)
	}
	base := simtest.Serve(t, s)
	if code, body := complete(t, base); code != 200 || !strings.Contains(body, `"completion_tokens":3`) {
		t.Errorf("completion: %d %s", code, body)
	}
	if !strings.Contains(log.String(), "Starting vLLM server on "+base) {
		t.Errorf("log lacks the listen line:\n%s", log)
	}
}

// TestStartChild serves a simulator in a child process with the arguments
// given, and the child ends with the test.
func TestStartChild(t *testing.T) {
	c := simtest.StartChild(t, simtest.RoleSim, "--served-model-name", "child-model")
	if !strings.HasPrefix(c.First, "http://127.0.0.1:") {
		t.Fatalf("first line %q, want the base URL", c.First)
	}
	resp, err := http.Get(c.First + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"id":"child-model"`) {
		t.Errorf("/v1/models = %s, want the child's served name", b)
	}
	if code, _ := complete(t, c.First); code != 200 {
		t.Errorf("completion: %d", code)
	}
	http.DefaultClient.CloseIdleConnections()
}

// TestServeReportsServeError: a server whose Serve fails fails the test at
// cleanup; here a fake that fails is checked through a sub-test's result.
func TestServeReportsServeError(t *testing.T) {
	failing := &fakeServer{err: io.ErrUnexpectedEOF}
	ok := t.Run("inner", func(t *testing.T) {
		inner := &recordingTB{TB: t}
		simtest.Serve(inner, failing)
		inner.cleanup()
		if !inner.failed {
			t.Error("Serve's error was not reported")
		}
	})
	if !ok {
		t.Error("inner test failed")
	}
}

// fakeServer's Serve returns err once its context ends.
type fakeServer struct{ err error }

func (f *fakeServer) Serve(ctx context.Context, ln net.Listener) error {
	<-ctx.Done()
	ln.Close()
	return f.err
}
func (f *fakeServer) Close() error { return nil }

// recordingTB collects cleanups and errors instead of running and
// reporting them.
type recordingTB struct {
	testing.TB
	cleanups []func()
	failed   bool
}

func (r *recordingTB) Cleanup(f func())                  { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Errorf(format string, args ...any) { r.failed = true }
func (r *recordingTB) Helper()                           {}
func (r *recordingTB) cleanup() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}
