package calreplay

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
)

// HostPace is how well the host kept real time while the HTTP path ran:
// the engine time its loop lost (engine.MetricLostSeconds, read from the
// server's /metrics) and how long this process's threads waited for a CPU
// the host gave to others (cpuWait), over the run's Wall time. The HTTP
// path runs the simulator and the suite's client in one process, so a host
// too busy for either shows in one of the two: a late engine step in
// Lost, a request the client or the API server handled late in Waited.
type HostPace struct {
	Lost, Waited, Wall time.Duration
	// WaitKnown: the host reports its run-queue time (Linux schedstat);
	// without it only Lost says.
	WaitKnown bool
}

// Share is the larger of the two measures per second of the run.
func (h HostPace) Share() float64 {
	if h.Wall <= 0 {
		return 0
	}
	return float64(max(h.Lost, h.Waited)) / float64(h.Wall)
}

// Behind reports whether the host fell behind real time by more than
// engine.BehindThreshold: the HTTP path's figures are then the host's, not
// the model's.
func (h HostPace) Behind() bool { return h.Share() > engine.BehindThreshold }

func (h HostPace) String() string {
	waited := "unknown here (no /proc/self/task/*/schedstat)"
	if h.WaitKnown {
		waited = h.Waited.Round(time.Millisecond).String()
	}
	return fmt.Sprintf("host behind real time %.1f%% of %v (%s %v, threads waiting for a CPU %s; over %.0f%% the figures are the host's)",
		100*h.Share(), h.Wall.Round(time.Millisecond), engine.MetricLostSeconds, h.Lost.Round(time.Millisecond),
		waited, 100*engine.BehindThreshold)
}

// cpuWait is how long this process's threads have waited for a CPU, in
// all (the second field of Linux's /proc/self/task/*/schedstat: time on a
// run queue), and whether the host says (false off Linux, or without
// schedstats).
func cpuWait() (time.Duration, bool) {
	paths, _ := filepath.Glob("/proc/self/task/*/schedstat")
	var sum time.Duration
	n := 0
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread has exited
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		sum += time.Duration(v)
		n++
	}
	return sum, n > 0
}

// scrapeLost reads engine.MetricLostSeconds from the /metrics of the
// server at base.
func scrapeLost(ctx context.Context, client *http.Client, base string) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", engine.MetricLostSeconds, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("read %s: GET /metrics: %s", engine.MetricLostSeconds, resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, engine.MetricLostSeconds+"{") && !strings.HasPrefix(line, engine.MetricLostSeconds+" ") {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("read %s: %q: %w", engine.MetricLostSeconds, line, err)
		}
		return time.Duration(v * float64(time.Second)), nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read %s: %w", engine.MetricLostSeconds, err)
	}
	return 0, fmt.Errorf("the server's /metrics has no %s: it cannot say whether it kept real time", engine.MetricLostSeconds)
}
