package perf_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/orchestrate/gpuset"
	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// TestProfilesSpreadOverGPUSets is issue 34's done-when for one runner:
// three profiles spread over two fake GPU sets (the simulator image on
// the container backend, which holds the sets' leases but asks Docker for
// no device), a go test process each, while Docker's events are watched
// for the managed label: two servers exist at once (two profiles at a
// time), never two on one set (the org.vllmperf.gpus label), and the
// merged folder holds every profile's benchmarks in the profiles' order.
// The processes share this machine's CPUs: their timings are not what a
// GPU runner measures, and nothing here compares them.
func TestProfilesSpreadOverGPUSets(t *testing.T) {
	testphase.Alone(t)
	testphase.Lane(t, testphase.LaneContainers)
	if testing.Short() {
		t.Skip("starts three go test processes with containers: not with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	if err := server.DockerAvailable(ctx); err != nil {
		skipWithoutDocker(t, fmt.Errorf("%w: %v", server.ErrNoDocker, err))
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to run the suite's processes: %v", err)
	}
	sets, err := gpuset.ParseSets("fake-a;fake-b")
	if err != nil {
		t.Fatal(err)
	}
	job := fmt.Sprintf("spread-test-%d", os.Getpid()) // this test's containers only (org.vllmperf.job)
	w, err := watchSets(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	defer w.stop()
	dir := t.TempDir()
	profiles := []string{"basic", "low-latency", "high-throughput"}
	var jobs []gpuset.Job
	for _, p := range profiles {
		jobs = append(jobs, gpuset.Job{Profile: p, Width: 1})
	}
	bin := filepath.Join(dir, "perf.test") // built once: the processes start at once, not after two builds
	build := exec.CommandContext(ctx, goBin, "test", "-c", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go test -c: %v\n%s", err, out)
	}
	var log strings.Builder
	res, err := gpuset.Run(ctx, gpuset.Options{Sets: sets, Jobs: jobs, Out: filepath.Join(dir, "merged"), Parts: filepath.Join(dir, "parts"),
		TestArgs: []string{"-test.run", "^$", "-test.bench", "Perf/./scenario=ttft-tpot", "-test.benchtime", "1x"},
		Binary:   bin, Dir: ".", Stdout: &log,
		Env: append(os.Environ(), "VLLMPERF_BACKEND=container", "VLLMPERF_IMAGE=sim", "VLLMPERF_SCENARIOS=ttft-tpot", "VLLMPERF_SIZE=quick",
			"VLLMPERF_SIM_ARGS=", "VLLMPERF_TELEMETRY=", "VLLMPERF_GPU_NAME=", server.EnvJob+"="+job)})
	peak, starts, perSet := w.stop()
	if err != nil {
		t.Fatalf("spread: %v\n%s", err, log.String())
	}
	for _, p := range res.Parts {
		t.Logf("%s on set %s: %s to %s", p.Profile, p.Set, p.Start.Format(time.TimeOnly+".000"), p.End.Format(time.TimeOnly+".000"))
	}
	t.Logf("%d managed containers started; at most %d at once; per set at most %v", starts, peak, perSet)
	if starts < len(profiles) {
		t.Errorf("%d managed containers started, want one per profile (%d): the run did not use the container backend\n%s", starts, len(profiles), log.String())
	}
	if peak != 2 {
		t.Errorf("at most %d managed containers existed at once, want 2 (two sets, three profiles)\n%s", peak, log.String())
	}
	for set, n := range perSet {
		if n > 1 {
			t.Errorf("set %s held %d servers at once, want 1", set, n)
		}
	}
	if res.Code() != 0 {
		t.Errorf("a profile's benchmarks failed (exit %d):\n%s", res.Code(), log.String())
	}

	bench, err := os.ReadFile(filepath.Join(res.Merged.Out, results.BenchFile))
	if err != nil {
		t.Fatal(err)
	}
	in, err := input.ReadFile(filepath.Join(res.Merged.Out, results.BenchFile))
	if err != nil {
		t.Fatal(err)
	}
	bs, err := in.Benchmarks(nil)
	if err != nil {
		t.Fatal(err)
	}
	last := -1
	for _, p := range profiles {
		at := strings.Index(string(bench), "BenchmarkPerf/profile="+p+"/scenario=ttft-tpot/")
		if at < last {
			t.Errorf("bench.txt: profile %s at byte %d, before the profile ahead of it (%d): want the profiles' order", p, at, last)
		}
		last = at
		n := 0
		for _, b := range bs {
			if b.Profile == p {
				n++
			}
		}
		if n != 3 {
			t.Errorf("profile %s has %d benchmarks in the merged bench.txt, want its 3 ttft-tpot points", p, n)
		}
	}
	sum, err := results.Read(res.Merged.Out)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range profiles {
		if sum.Config[p]["gpu"] == "" {
			t.Errorf("summary.json has no configuration of profile %s: %v", p, sum.Config)
		}
	}
}

// setWatch follows Docker's container events for the managed label and
// counts the containers that exist at once, in all and per GPU set.
type setWatch struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	live   map[string]string // id → its set
	peak   int
	starts int
	perSet map[string]int // the most containers one set had at once
	done   chan struct{}
	once   sync.Once
}

// watchSets starts following the events of job's containers; a container
// counts from its create to its destroy.
func watchSets(ctx context.Context, job string) (*setWatch, error) {
	cmd := exec.CommandContext(ctx, "docker", "events", "--filter", "type=container", "--filter", "label="+managedLabel, "--filter", "label=org.vllmperf.job="+job,
		"--format", `{{.Action}} {{.Actor.ID}} {{index .Actor.Attributes "org.vllmperf.gpus"}}`)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("docker events: %w (the docker CLI comes with docker.io)", err)
	}
	w := &setWatch{cmd: cmd, live: map[string]string{}, perSet: map[string]int{}, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) >= 2 {
				w.event(f[0], f[1], strings.Join(f[2:], " "))
			}
		}
	}()
	return w, nil
}

func (w *setWatch) event(action, id, set string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch action {
	case "create":
		w.live[id] = set
		w.starts++
		w.peak = max(w.peak, len(w.live))
		n := 0
		for _, s := range w.live {
			if s == set {
				n++
			}
		}
		w.perSet[set] = max(w.perSet[set], n)
	case "destroy":
		delete(w.live, id)
	}
}

// stop ends the watch once the last second's events are read.
func (w *setWatch) stop() (peak, starts int, perSet map[string]int) {
	w.once.Do(func() {
		time.Sleep(time.Second) // docker events delivers asynchronously
		_ = w.cmd.Process.Kill()
		<-w.done
		_ = w.cmd.Wait()
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.peak, w.starts, w.perSet
}
