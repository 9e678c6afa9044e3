package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/simtest"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/testphase"
	"github.com/vllmperf/vllmperf/internal/vllmsim"
)

// The tests of issue 11's rows that concern starting or reaching a server,
// and of the reliability plan's server faults (docs/reliability.md).

// TestRow16_TargetWithAPIPath: a target given with an API path is cut back
// to the server's base URL; one that is no URL says what a base URL is,
// with the user's own host when only the scheme is missing.
func TestRow16_TargetWithAPIPath(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	for _, tc := range []struct {
		target  string
		want    string // base URL
		cut     bool   // an API path was cut off
		wantErr string // part of the error
	}{
		// The base URL as it should be given.
		{"http://127.0.0.1:8000", "http://127.0.0.1:8000", false, ""},
		// A trailing slash and /v1 are dropped quietly (the OpenAI SDKs' form).
		{"http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000", false, ""},
		// The chat endpoint itself: the row.
		{"http://host:8000/v1/chat/completions", "http://host:8000", true, ""},
		// The completions endpoint and the model list.
		{"https://host/v1/completions", "https://host", true, ""},
		{"http://host/v1/models", "http://host", true, ""},
		// /health and /metrics.
		{"http://host:8000/health", "http://host:8000", true, ""},
		{"http://host:8000/metrics", "http://host:8000", true, ""},
		// A proxy's path prefix is kept.
		{"http://gw/vllm/qwen/v1/chat/completions", "http://gw/vllm/qwen", true, ""},
		// A query is dropped.
		{"http://host:8000/?x=1", "http://host:8000", false, ""},
		// No scheme: the suggestion is the user's own host with http://.
		{"127.0.0.1:18400", "", false, `"127.0.0.1:18400" has no scheme: want the server's base URL, e.g. http://127.0.0.1:18400`},
		// localhost:8000 parses as scheme "localhost": still no scheme.
		{"localhost:8000", "", false, "e.g. http://localhost:8000"},
		// Another scheme.
		{"ftp://host/", "", false, `"ftp://host/": want the server's base URL`},
		// Credentials in the URL are refused without echoing them.
		{"http://user:s3cret@host:8000", "", false, "put no credentials in the URL"},
	} {
		t.Run(tc.target, func(t *testing.T) {
			t.Parallel()
			got, cut, err := ParseTarget(tc.target)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrSettings) {
					t.Fatalf("ParseTarget(%q) = %q, %v; want an ErrSettings containing %q", tc.target, got, err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("the error shows the password: %v", err)
				}
				return
			}
			if err != nil || got != tc.want || cut != tc.cut {
				t.Errorf("ParseTarget(%q) = %q, cut %v, %v; want %q, cut %v", tc.target, got, cut, err, tc.want, tc.cut)
			}
		})
	}
}

// TestRow16_ExternalBackendDerivesBase: the external backend reaches a
// server given by its chat endpoint's URL, and says which base it uses.
func TestRow16_ExternalBackendDerivesBase(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	srv := fakeVLLM(t, 200, `{"data":[{"id":"m"}]}`)
	var log strings.Builder
	s, err := Run(context.Background(), profile.Profile{Name: "p"}, WithBackend(KindExternal), WithTarget(srv.URL+"/v1/chat/completions"), WithLog(&log))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.BaseURL(), srv.URL; got != want {
		t.Errorf("BaseURL = %q, want %q", got, want)
	}
	if !strings.Contains(log.String(), "using the base URL "+srv.URL) {
		t.Errorf("the log does not say which base URL is used:\n%s", log.String())
	}
}

// TestRow15_WaitReady: an external server that answers 503 while it starts
// (the simulator with --sim-startup) fails at once without a wait, with
// ErrUnhealthy, and is waited for with WithWaitReady (a 1.5 s start-up
// within a minute's bound).
func TestRow15_WaitReady(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	startSim := func(t *testing.T, startup string) string {
		sim, err := vllmsim.New([]string{"--model", "m", "--sim-startup", startup}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return simtest.Serve(t, sim)
	}
	p := profile.Profile{Name: "p"}
	t.Run("no wait", func(t *testing.T) {
		t.Parallel()
		_, err := Run(context.Background(), p, WithBackend(KindExternal), WithTarget(startSim(t, "10m")))
		if !errors.Is(err, ErrUnhealthy) || !strings.Contains(err.Error(), "503") {
			t.Fatalf("err = %v, want ErrUnhealthy naming the 503", err)
		}
	})
	t.Run("wait", func(t *testing.T) {
		t.Parallel()
		s, err := Run(context.Background(), p, WithBackend(KindExternal), WithTarget(startSim(t, "1500ms")), WithWaitReady(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if s.Model() != "m" {
			t.Errorf("Model = %q, want m", s.Model())
		}
	})
	t.Run("never ready", func(t *testing.T) {
		t.Parallel()
		never := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "starting", http.StatusServiceUnavailable)
		}))
		defer never.Close()
		_, err := Run(context.Background(), p, WithBackend(KindExternal), WithTarget(never.URL), WithWaitReady(700*time.Millisecond))
		if !errors.Is(err, ErrUnhealthy) || !strings.Contains(err.Error(), "did not become healthy within 700ms") {
			t.Fatalf("err = %v, want ErrUnhealthy with the bound", err)
		}
	})
	t.Run("negative", func(t *testing.T) {
		t.Parallel()
		_, err := Run(context.Background(), p, WithBackend(KindExternal), WithTarget("http://127.0.0.1:1"), WithWaitReady(-time.Second))
		if !errors.Is(err, ErrSettings) {
			t.Fatalf("err = %v, want ErrSettings", err)
		}
	})
}

// TestRow09_ExternalKeyRejected: a server that refuses the key (401 or
// 403 on /v1/models) gives ErrKeyRejected, which the caller turns into a
// message naming where the key came from; the key never shows.
func TestRow09_ExternalKeyRejected(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			srv := fakeServer(t, 200, status, `{"error":"Unauthorized"}`, "")
			_, err := Run(context.Background(), profile.Profile{Name: "p"}, WithBackend(KindExternal), WithTarget(srv.URL), WithAPIKey(fakeKey))
			if !errors.Is(err, ErrKeyRejected) {
				t.Fatalf("err = %v, want ErrKeyRejected", err)
			}
			if strings.Contains(err.Error(), fakeKey) {
				t.Errorf("the error shows the key: %v", err)
			}
		})
	}
}

// TestProbeServerDies: the in-process simulator's engine dies after two
// requests (--sim-fault-die-after): Probe says the server is no longer
// healthy and carries the log line where it died; once Serve has returned
// it says the server exited.
func TestProbeServerDies(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	p, err := profile.Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := Run(ctx, p.WithSimArgs("--sim-fault-die-after", "2"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if err := Probe(ctx, s); err != nil {
		t.Fatalf("Probe of a healthy server: %v", err)
	}
	for range 2 {
		checkStream(t, streamChat(t, s.BaseURL(), s.Model()))
	}
	err = Probe(ctx, s)
	var down *DownError
	if !errors.As(err, &down) || down.Exited || !errors.Is(err, ErrServerDown) {
		t.Fatalf("Probe = %v, want a *DownError (not exited)", err)
	}
	for _, want := range []string{"server no longer healthy: /health answered 503", "last ", "EngineCore died after 2 requests"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Probe's error lacks %q:\n%v", want, err)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	err = Probe(ctx, s)
	if !errors.As(err, &down) || !down.Exited || !strings.HasPrefix(err.Error(), "server exited: simulator stopped serving") {
		t.Fatalf("Probe after Close = %v, want server exited", err)
	}
}

// TestProbeExternal: an external server without /health passes; one whose
// /health answers 503 is down, with no logs (they are not visible here).
func TestProbeExternal(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	var health atomic.Int32
	health.Store(http.StatusOK)
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(int(health.Load())) })
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"data":[{"id":"m"}]}`) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx := context.Background()
	s, err := Run(ctx, profile.Profile{Name: "p"}, WithBackend(KindExternal), WithTarget(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		status int
		want   string // "" for healthy
	}{
		{http.StatusOK, ""},       // healthy
		{http.StatusNotFound, ""}, // no /health: cannot tell, taken as serving
		{http.StatusServiceUnavailable, "server no longer healthy: /health answered 503 Service Unavailable"}, // engine dead
	} {
		health.Store(int32(tc.status))
		err := Probe(ctx, s)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("/health %d: Probe = %v, want nil", tc.status, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("/health %d: Probe = %v, want %q", tc.status, err, tc.want)
		}
	}
}

// TestContainerDiesMidRun: a simulator container whose engine dies after
// two requests (--sim-fault-die-after 2) is reported down with its last
// log lines; once the container has exited, Probe says so with the exit
// code, and Close removes it (TestMain fails the run on any container
// left behind).
func TestContainerDiesMidRun(t *testing.T) {
	testphase.Fault(t)
	needDocker(t)
	p, err := profile.Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	s, err := startSimContainer(t, p.WithSimArgs("--sim-fault-die-after", "2"), defaultSimStartupTimeout)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for range 2 {
		checkStream(t, streamChat(t, s.BaseURL(), s.Model()))
	}
	// The death's log line reaches Docker a moment after /health turns 503:
	// Probe waits for the log to settle, so the line is there.
	err = Probe(ctx, s)
	if !errors.Is(err, ErrServerDown) || !strings.Contains(err.Error(), "/health answered 503") || !strings.Contains(err.Error(), "EngineCore died after 2 requests") {
		t.Fatalf("Probe = %v, want server down with the log line of the death", err)
	}
	// The process dies, as vLLM's API server does after its engine: the
	// container exits.
	cs := s.(*containerServer)
	stop := time.Second
	if err := cs.c.Stop(ctx, &stop); err != nil {
		t.Fatal(err)
	}
	err = Probe(ctx, s)
	var down *DownError
	if !errors.As(err, &down) || !down.Exited || !strings.HasPrefix(err.Error(), "server exited: container exited with code") {
		t.Fatalf("Probe after the exit = %v, want server exited with the code", err)
	}
	if !strings.Contains(err.Error(), "EngineCore died after 2 requests") {
		t.Errorf("the exit lacks the container's last log lines:\n%v", err)
	}
	id := cs.containerID()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	left, err := listManaged(ctx, session())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range left {
		if strings.HasPrefix(id, l) || strings.HasPrefix(l, id) {
			t.Errorf("container %.12s left after Close", id)
		}
	}
}

// TestHealthNeverReadyShowsLogs: a container whose /health never turns
// 200 (--sim-startup far past the start-up timeout) fails the start with
// the timeout and the container's last log lines, and is removed.
func TestHealthNeverReadyShowsLogs(t *testing.T) {
	testphase.Fault(t)
	needDocker(t)
	prepareSimImage(t)
	s, err := startSimContainer(t, withSimStartup(t, time.Hour), 3*time.Second)
	if err == nil {
		t.Fatalf("started %s although /health never answered 200", s.BaseURL())
	}
	var sf *startFailure
	if !errors.As(err, &sf) || len(sf.logs) == 0 {
		t.Fatalf("err = %v (%T), want a start failure with log lines", err, err)
	}
	for _, want := range []string{"start vllm: profile basic", "deadline exceeded", "last ", "log lines of the container"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if left, err := listManaged(ctx, session()); err != nil || len(left) > 0 {
		t.Errorf("left behind: %v (%v)", left, err)
	}
}
