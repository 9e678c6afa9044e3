package scrape

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPrometheusSource: a real Prometheus scrapes two replicas each
// second; the source reads them through its HTTP API as one deployment,
// waits for samples newer than each read, and a run on one replica gives
// the same delta as scraping it (TestFleet).
func TestPrometheusSource(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		msg := "prometheus not found on PATH: install Debian's prometheus package"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + " (CI=true: a missing tool is a failure)")
		}
		t.Skip(msg + " (skipped; CI=true makes this a failure)")
	}
	a := newReplica(t, "vllm-v1-labels-dp2-before.prom")
	b := newReplica(t, "vllm-v1-labels-dp2-before.prom")
	dir := t.TempDir()
	var targets string
	for _, r := range []*replica{a, b} {
		u, err := url.Parse(r.URL)
		require.NoError(t, err)
		targets += fmt.Sprintf("%q,", u.Host)
	}
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: vllm\n    static_configs:\n      - targets: [%s]\n", targets[:len(targets)-1])
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "tsdb"), "--web.listen-address="+addr)
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = log, log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = log.Close() })
	for {
		resp, err := http.Get("http://" + addr + "/-/ready")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if ctx.Err() != nil {
			b, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
			t.Fatalf("prometheus not ready: %s", b)
		}
		time.Sleep(100 * time.Millisecond)
	}

	src := NewPrometheus("http://"+addr, `{job="vllm"}`, WithPromModel("meta-llama/Llama-3.1-8B-Instruct"))
	var before *Snapshot
	for {
		// Until Prometheus has scraped both replicas once.
		before, err = src.Scrape(ctx)
		if err == nil && len(before.Replicas) == 2 {
			break
		}
		require.NoError(t, ctx.Err(), "prometheus never scraped both replicas: %v", err)
		time.Sleep(200 * time.Millisecond)
	}
	assert.Len(t, before.Replicas, 2)
	assert.Len(t, before.ProcessStarts, 2)
	assert.Equal(t, []string{"0", "1"}, before.Engines)
	total, err := before.Counter(RequestSuccessTotal)
	require.NoError(t, err)
	assert.Equal(t, 2*57.0, total, "the replicas' totals are summed")

	a.serve(t, "vllm-v1-labels-dp2-after.prom")
	after, err := src.Scrape(ctx)
	require.NoError(t, err)
	d, err := Diff(before, after)
	require.NoError(t, err)
	got, err := d.Counter(RequestSuccessTotal)
	require.NoError(t, err)
	assert.Equal(t, 16.0, got, "the run on replica a, read after Prometheus scraped it")
	h, err := d.Histogram(TimeToFirstTokenSeconds)
	require.NoError(t, err)
	assert.Equal(t, 16.0, h.Count, "histograms reassembled from _bucket series")

	// A selector that picks nothing says so.
	_, err = NewPrometheus("http://"+addr, `{job="nothing"}`).Scrape(ctx)
	assert.ErrorContains(t, err, "no vllm:num_requests_running series matches the selector")
	// A selector without braces is refused before any query.
	_, err = NewPrometheus("http://"+addr, `job="vllm"`).Scrape(ctx)
	assert.ErrorContains(t, err, "want label matchers in braces")
}
