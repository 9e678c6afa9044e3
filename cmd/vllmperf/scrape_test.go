package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata/")

// recordedAt is the modification time given to fixture copies, so the
// "scraped at" of --file output is fixed.
var recordedAt = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// fixtureCopy copies fixtures/metrics/name into a temporary folder with a
// fixed modification time and returns the folder and the copy's path.
func fixtureCopy(t *testing.T, name string) (dir, path string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "metrics", name))
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	path = filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, recordedAt, recordedAt); err != nil {
		t.Fatal(err)
	}
	return dir, path
}

// runScrape runs `vllmperf scrape args...` and returns stdout and the error.
func runScrape(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), &out, &errOut, append([]string{"scrape"}, args...))
	return out.String(), err
}

// TestScrapeGolden prints recorded expositions as a table and as JSON and
// compares them with testdata/scrape-*.{txt,json} (go test -update rewrites
// them).
func TestScrapeGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		golden  string
		fixture string
	}{
		// real vLLM's Python client style, mid-run: _created and non-vLLM families ignored
		{"scrape-python-client", "crafted-python-client.prom"},
		// vLLM 0.9 names shown under the V1 ones
		{"scrape-v0.9", "vllm-sim-v0.9-after.prom"},
		// two engines × two models summed; request_success_total by finished_reason
		{"scrape-two-engines", "crafted-two-engines.prom"},
	} {
		for _, format := range []string{"txt", "json"} {
			t.Run(tc.golden+"."+format, func(t *testing.T) {
				t.Parallel()
				dir, path := fixtureCopy(t, tc.fixture)
				args := []string{"--file", path}
				if format == "json" {
					args = append(args, "--json")
				}
				out, err := runScrape(t, args...)
				if err != nil {
					t.Fatalf("vllmperf scrape %v: %v", args, err)
				}
				got := strings.ReplaceAll(out, dir, "TMPDIR")
				goldenFile := filepath.Join("testdata", tc.golden+"."+format)
				if *updateGolden {
					if err := os.MkdirAll("testdata", 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(goldenFile, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(goldenFile)
				if err != nil {
					t.Fatalf("%v (run go test -run ScrapeGolden -update to create it)", err)
				}
				if got != string(want) {
					t.Errorf("output differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", goldenFile, got, want)
				}
			})
		}
	}
}

// TestScrapeJSONKeys checks the keys the suite and users rely on, on a
// 0.9-era exposition: V1 names without the prefix, histograms as
// {count, sum, buckets}.
func TestScrapeJSONKeys(t *testing.T) {
	t.Parallel()
	_, path := fixtureCopy(t, "vllm-sim-v0.9-during.prom")
	out, err := runScrape(t, "--file", path, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	for _, key := range []string{"num_requests_running", "num_requests_waiting", "kv_cache_usage_perc", "prompt_tokens_total",
		"generation_tokens_total", "request_success_total", "prefix_cache_queries_total", "prefix_cache_hits_total", "num_preemptions_total"} {
		if _, ok := got[key].(float64); !ok {
			t.Errorf("%s = %#v, want a number", key, got[key])
		}
	}
	for _, key := range []string{"time_to_first_token_seconds", "inter_token_latency_seconds", "e2e_request_latency_seconds"} {
		h, _ := got[key].(map[string]any)
		if _, ok := h["count"].(float64); !ok || h["sum"] == nil || h["buckets"] == nil || len(h) != 3 {
			t.Errorf("%s = %#v, want {count, sum, buckets}", key, got[key])
		}
	}
	for _, old := range []string{"gpu_cache_usage_perc", "vllm:gpu_cache_usage_perc", "time_per_output_token_seconds"} {
		if _, ok := got[old]; ok {
			t.Errorf("old name %s is a key; want it under its V1 name", old)
		}
	}
	if v := got["num_requests_running"]; v != 16.0 {
		t.Errorf("num_requests_running = %v, want 16 (the mid-run scrape)", v)
	}
}

// TestScrapeURLMatchesFile reads the same exposition over HTTP and from a
// file: the metrics agree, only the source and time differ.
func TestScrapeURLMatchesFile(t *testing.T) {
	t.Parallel()
	_, path := fixtureCopy(t, "vllm-sim-v1-during.prom")
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(body)
	}))
	defer srv.Close()

	decode := func(args ...string) map[string]any {
		out, err := runScrape(t, append(args, "--json")...)
		if err != nil {
			t.Fatalf("vllmperf scrape %v: %v", args, err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "scrape")
		return m
	}
	fromFile := decode("--file", path)
	// A bare server address gets /metrics.
	fromURL := decode("--url", srv.URL)
	if !reflect.DeepEqual(fromURL, fromFile) {
		t.Errorf("--url and --file disagree:\nurl  %v\nfile %v", fromURL, fromFile)
	}
}

func TestScrapeSendsKeyFromEnv(t *testing.T) {
	// t.Setenv: not parallel.
	t.Setenv("VLLMPERF_TEST_METRICS_KEY", "k-123")
	_, path := fixtureCopy(t, "vllm-sim-v1-after.prom")
	body, _ := os.ReadFile(path)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k-123" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	if _, err := runScrape(t, "--url", srv.URL+"/metrics", "--api-key-env", "VLLMPERF_TEST_METRICS_KEY"); err != nil {
		t.Errorf("with the key: %v", err)
	}
	_, err := runScrape(t, "--url", srv.URL+"/metrics")
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || strings.Contains(err.Error(), "k-123") {
		t.Errorf("without the key: %v, want HTTP 401 and no key in the message", err)
	}
}

// TestScrapeErrors: usage mistakes exit 2; a scrape that fails exits 1 with
// the URL or file and what went wrong.
func TestScrapeErrors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/broken" {
			body, _ := os.ReadFile(filepath.Join("..", "..", "fixtures", "metrics", "vllm-sim-malformed.prom"))
			_, _ = w.Write(body)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close) // the parallel subtests run after this function returns
	_, malformed := fixtureCopy(t, "vllm-sim-malformed.prom")

	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		want     []string
	}{
		// nothing to read
		{"no source", nil, 2, []string{"--url URL", "--file FILE"}},
		// two sources
		{"both", []string{"--url", srv.URL, "--file", malformed}, 2, []string{"exclude each other"}},
		// a key for a file
		{"key for file", []string{"--file", malformed, "--api-key-env", "HOME"}, 2, []string{"--api-key-env goes with --url"}},
		// an empty key variable
		{"empty key", []string{"--url", srv.URL, "--api-key-env", "VLLMPERF_TEST_SURELY_UNSET"}, 2, []string{"VLLMPERF_TEST_SURELY_UNSET"}},
		// not a URL
		{"bad url", []string{"--url", "127.0.0.1:8000"}, 2, []string{`--url "127.0.0.1:8000"`, "http://HOST:PORT/metrics"}},
		// a zero timeout
		{"bad timeout", []string{"--url", srv.URL, "--timeout", "0s"}, 2, []string{"--timeout"}},
		// a stray argument
		{"positional", []string{"metrics.txt"}, 2, []string{`unexpected argument "metrics.txt"`}},
		// wrong path: 404 names the URL
		{"404", []string{"--url", srv.URL + "/stats"}, 1, []string{srv.URL + "/stats", "HTTP 404"}},
		// malformed over HTTP: the line and its text
		{"malformed url", []string{"--url", srv.URL + "/broken"}, 1, []string{srv.URL + "/broken", "line 3", `engine=\"0\" 1`}},
		// malformed file
		{"malformed file", []string{"--file", malformed}, 1, []string{malformed, "line 3"}},
		// missing file
		{"missing file", []string{"--file", "/nonexistent/m.prom"}, 1, []string{"/nonexistent/m.prom", "no such file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, err := runScrape(t, tc.args...)
			if err == nil {
				t.Fatalf("succeeded with output %q, want an error", out)
			}
			var stderr bytes.Buffer
			if got := exitCode(err, &stderr); got != tc.wantCode {
				t.Errorf("exit code = %d, want %d (%v)", got, tc.wantCode, err)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			if out != "" {
				t.Errorf("printed %q on failure, want nothing on stdout", out)
			}
		})
	}
}
