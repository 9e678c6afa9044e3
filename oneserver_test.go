package perf_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// managedLabel is the label every container the server package starts
// carries (and make leak-check looks for).
const managedLabel = "org.vllmperf.managed=true"

// TestOneServerPerGPUSet runs the suite's tests through the container
// backend with the simulator image standing for vLLM, in two test
// processes at once as `go test ./...` runs them (the suite's package and
// the server package, whose container tests start servers too), while it
// watches Docker's events for the managed label: at no moment may two
// managed containers exist. Every start holds the devices' lease
// (internal/target/server/lease) until its container is gone.
//
// Its name matches no -run Perf pattern: it starts `go test -run Perf`.
func TestOneServerPerGPUSet(t *testing.T) {
	testphase.Alone(t)
	testphase.Lane(t, testphase.LaneContainers)
	if testing.Short() {
		t.Skip("starts two go test processes with containers (minutes): not with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	if err := server.DockerAvailable(ctx); err != nil {
		skipWithoutDocker(t, fmt.Errorf("%w: %v", server.ErrNoDocker, err))
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to run the suite's tests: %v", err)
	}
	w, err := watchContainers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.stop()

	// Six containers: two profiles of TestPerf, one after the other, and two
	// of TestPerfChecksFail's parallel cases in this package's process
	// (starts racing within a process), two profiles of
	// TestContainerProfilesServeStream in the server package's (racing
	// across processes). The other cases run in make test's phases anyway.
	cmd := exec.CommandContext(ctx, goBin, "test", "-count=1", "-short",
		"-run", "^(TestPerf|TestPerfChecksFail|TestContainerProfilesServeStream)$/^(profiles|usage_skew|missing_metric|basic|speculative)$",
		".", "./internal/target/server/")
	cmd.Env = append(os.Environ(),
		"VLLMPERF_BACKEND=container", "VLLMPERF_IMAGE=sim", "VLLMPERF_GPUS=none",
		"VLLMPERF_PROFILES=basic,low-latency", "VLLMPERF_SCENARIOS=ttft-tpot",
		"VLLMPERF_RESULTS=", "VLLMPERF_SIM_ARGS=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	peak, starts, overlaps := w.stop()
	t.Logf("%d managed containers started; at most %d at once", starts, peak)
	if runErr != nil {
		t.Fatalf("go test with the container backend: %v\n%s", runErr, out.String())
	}
	if starts < 6 {
		t.Errorf("only %d managed containers started, want the 6 of the selected cases: the run did not exercise the container backend\n%s", starts, out.String())
	}
	if peak > 1 {
		t.Errorf("%d managed containers existed at once, want at most 1:\n  %s", peak, strings.Join(overlaps, "\n  "))
	}
}

// containerWatch follows `docker events` for managed containers and
// counts how many exist at once.
type containerWatch struct {
	cmd *exec.Cmd

	mu       sync.Mutex
	live     map[string]string // id → session and profile
	peak     int
	starts   int
	overlaps []string
	done     chan struct{}
	once     sync.Once
}

// watchContainers starts following Docker's container events for the
// managed label. A container counts from its create to its destroy: it
// holds the GPUs (and the name) for all of that.
func watchContainers(ctx context.Context) (*containerWatch, error) {
	cmd := exec.CommandContext(ctx, "docker", "events", "--filter", "type=container", "--filter", "label="+managedLabel,
		"--format", `{{.Action}} {{.Actor.ID}} {{index .Actor.Attributes "org.vllmperf.session"}} {{index .Actor.Attributes "org.vllmperf.profile"}}`)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("docker events: %w (the docker CLI comes with docker.io)", err)
	}
	w := &containerWatch{cmd: cmd, live: map[string]string{}, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) >= 2 {
				w.event(f[0], f[1], strings.Join(f[2:], " "))
			}
		}
	}()
	return w, nil
}

// event counts a container's create or destroy; who names its session
// (process) and profile labels, for the overlap message.
func (w *containerWatch) event(action, id, who string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch action {
	case "create":
		w.live[id] = id[:min(12, len(id))] + " (session " + who + ")"
		w.starts++
		if len(w.live) > w.peak {
			w.peak = len(w.live)
		}
		if len(w.live) > 1 {
			w.overlaps = append(w.overlaps, fmt.Sprintf("%s: %d containers exist: %s", time.Now().Format(time.TimeOnly), len(w.live), strings.Join(slices.Sorted(maps.Values(w.live)), ", ")))
		}
	case "destroy":
		delete(w.live, id)
	}
}

// stop ends the watch (after the events of the last second are read) and
// returns the peak, the number of containers created and the overlaps.
func (w *containerWatch) stop() (peak, starts int, overlaps []string) {
	w.once.Do(func() {
		time.Sleep(time.Second) // docker events delivers asynchronously: let the last ones arrive
		_ = w.cmd.Process.Kill()
		<-w.done
		_ = w.cmd.Wait()
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.peak, w.starts, w.overlaps
}
