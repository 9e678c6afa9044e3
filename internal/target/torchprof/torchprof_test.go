package torchprof

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestEvents(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file string
		want int
		err  string
	}{
		{"two.pt.trace.json", 2, ""},                    // plain JSON
		{"gz.pt.trace.json.gz", 2, ""},                  // gzip, as vLLM writes by default
		{"empty.pt.trace.json", 0, "no traceEvents"},    // an empty list
		{"noevents.pt.trace.json", 0, "no traceEvents"}, // no list at all
		{"text.pt.trace.json", 0, "not a Chrome trace"}, // not JSON
	} {
		got, err := Events(filepath.Join("testdata", tc.file))
		if got != tc.want || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("Events(%s) = %d, %v; want %d and an error with %q", tc.file, got, err, tc.want, tc.err)
		}
	}
}

func TestTracesSkipsOtherFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"a.pt.trace.json", "b.pt.trace.json.gz", "notes.txt", ".trace-123"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Traces(dir, time.Now().Add(-time.Minute))
	if err != nil || len(got) != 2 {
		t.Errorf("Traces = %v, %v; want the two trace files", got, err)
	}
	if got, _ := Traces(dir, time.Now().Add(time.Hour)); len(got) != 0 {
		t.Errorf("Traces since the future = %v, want none (older files are another session's)", got)
	}
}

// profServer is a server whose profiler endpoints are on (405 on GET) or
// off (404), counting the POSTs.
func profServer(t *testing.T, on bool, starts, stops *atomic.Int32) string {
	mux := http.NewServeMux()
	if on {
		mux.HandleFunc("POST /start_profile", func(w http.ResponseWriter, r *http.Request) { starts.Add(1) })
		mux.HandleFunc("POST /stop_profile", func(w http.ResponseWriter, r *http.Request) { stops.Add(1) })
		mux.HandleFunc("GET /start_profile", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusMethodNotAllowed) })
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestCheck(t *testing.T) {
	t.Parallel()
	var starts, stops atomic.Int32
	if err := New(profServer(t, true, &starts, &stops), "").Check(context.Background()); err != nil {
		t.Errorf("Check with the profiler on: %v", err)
	}
	err := New(profServer(t, false, &starts, &stops), "").Check(context.Background())
	if !errors.Is(err, ErrNotEnabled) || !strings.Contains(err.Error(), "VLLM_TORCH_PROFILER_DIR") {
		t.Errorf("Check with the profiler off: %v, want ErrNotEnabled with how to turn it on", err)
	}
	if starts.Load()+stops.Load() != 0 {
		t.Errorf("Check started or stopped the profiler")
	}
}

func TestRun(t *testing.T) {
	t.Parallel()
	t.Run("starts at the target and stops when the load ends", func(t *testing.T) {
		t.Parallel()
		var starts, stops atomic.Int32
		c := New(profServer(t, true, &starts, &stops), "")
		var n atomic.Int32
		running := func(context.Context) (int, error) { return int(n.Add(1)), nil } // 1, 2, 3, ...
		done := make(chan struct{})
		out := make(chan *Capture)
		go func() { out <- c.Run(context.Background(), Settings{Running: 3, Window: time.Hour}, running, done) }()
		for starts.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		close(done)
		cp := <-out
		if cp.Err != nil || cp.RunningAtStart != 3 || stops.Load() != 1 {
			t.Errorf("capture %+v, stops %d; want started at 3 running, stopped once", cp, stops.Load())
		}
	})
	t.Run("the load ends before the target", func(t *testing.T) {
		t.Parallel()
		var starts, stops atomic.Int32
		c := New(profServer(t, true, &starts, &stops), "")
		done := make(chan struct{})
		close(done)
		cp := c.Run(context.Background(), Settings{Running: 8}, func(context.Context) (int, error) { return 2, nil }, done)
		if cp.Err == nil || !strings.Contains(cp.Err.Error(), "before 8 requests were running") || starts.Load() != 0 {
			t.Errorf("capture err %v, starts %d; want the target named and no start", cp.Err, starts.Load())
		}
	})
	t.Run("no trace appears", func(t *testing.T) {
		t.Parallel()
		var starts, stops atomic.Int32
		c := New(profServer(t, true, &starts, &stops), "")
		cp := c.Run(context.Background(), Settings{Dir: t.TempDir(), Window: time.Millisecond, FlushTimeout: 200 * time.Millisecond}, nil, nil)
		if cp.Err == nil || !strings.Contains(cp.Err.Error(), "no trace file") {
			t.Errorf("capture err %v, want no trace file named", cp.Err)
		}
	})
}
