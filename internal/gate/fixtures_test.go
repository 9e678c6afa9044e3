package gate

// The bench files in testdata/bench are generated here, deterministically,
// from seeded noise around figures of the embedded simulator's basic
// profile (Qwen3-0.6B on sim:rtx4090). TestFixtures keeps them equal to
// what this code produces; `go test -run TestFixtures -update` rewrites
// them after a change here.

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// metric is one unit of a point: its typical value and the run-to-run
// noise (the sd of the log, about the coefficient of variation).
type metric struct {
	unit  string
	value float64
	cv    float64
}

// point is one benchmark of a profile; requests/req-s gives ns/op.
type point struct {
	name     string // the part after profile=...
	requests float64
	metrics  []metric
}

const ms = 1e6 // nanoseconds

// servePoint is a load point's metrics: latencies in ns, throughputs per
// second, peaks. Tail percentiles are noisier than medians, as they are
// across runs of 128 requests.
func servePoint(name string, requests, ttft50, ttft99, tpot50, tpot99, itl99, e2el99, tokS, reqS, kvPeak, running, waiting float64) point {
	return point{name: name, requests: requests, metrics: []metric{
		{"ttft-p50-ns", ttft50, 0.015}, {"ttft-p99-ns", ttft99, 0.035},
		{"tpot-p50-ns", tpot50, 0.010}, {"tpot-p99-ns", tpot99, 0.025},
		{"itl-p99-ns", itl99, 0.030}, {"e2el-p99-ns", e2el99, 0.020},
		{"tok/s", tokS, 0.012}, {"req/s", reqS, 0.012},
		{"err-%", 0, 0}, {"preemptions", 0, 0},
		{"kv-peak-%", kvPeak, 0.02}, {"running-peak", running, 0}, {"waiting-peak", waiting, 0},
	}}
}

// profilePoints are the benchmarks of one profile, in the suite's order.
func profilePoints(profile string) []point {
	if profile == "low-latency" {
		return []point{
			servePoint("scenario=ttft-tpot/prompt=short/conc=1", 32, 21*ms, 29*ms, 7.1*ms, 8.0*ms, 9.4*ms, 0.48e9, 134, 2.09, 1.1, 1, 0),
		}
	}
	return []point{
		{name: "scenario=startup", requests: 0, metrics: []metric{
			{"ready-ns", 3.4e9, 0.04}, {"cold-ttft-ns", 180 * ms, 0.06}, {"kv-blocks/GiB", 2340, 0},
		}},
		servePoint("scenario=ttft-tpot/prompt=medium/conc=1", 32, 38*ms, 52*ms, 9.2*ms, 10.4*ms, 12.1*ms, 0.64e9, 103, 1.62, 2.4, 1, 0),
		servePoint("scenario=concurrency-sweep/conc=8", 128, 61*ms, 118*ms, 11.8*ms, 14.9*ms, 21*ms, 0.93e9, 612, 9.6, 17, 8, 0),
		servePoint("scenario=concurrency-sweep/conc=16", 128, 96*ms, 205*ms, 14.6*ms, 19.8*ms, 31*ms, 1.31e9, 1010, 15.8, 33, 16, 0),
		servePoint("scenario=concurrency-sweep/conc=32", 128, 310*ms, 720*ms, 24*ms, 33*ms, 58*ms, 2.4e9, 1180, 18.4, 61, 32, 6),
		{name: "scenario=concurrency-sweep/summary=knee", metrics: []metric{
			{"knee-conc", 16, 0}, {"saturation-conc", 32, 0}, {"slo-conc", 32, 0}, {"recommended-conc", 16, 0},
		}},
		servePoint("scenario=poisson/rate=4", 128, 44*ms, 97*ms, 9.9*ms, 12.8*ms, 16.5*ms, 0.82e9, 251, 3.93, 6, 5, 0),
	}
}

// directedUnits get a `Unit ... better=` line, as the suite writes them.
var directedUnits = []struct{ unit, better string }{
	{"ttft-p50-ns", "lower"}, {"ttft-p99-ns", "lower"}, {"tpot-p50-ns", "lower"}, {"tpot-p99-ns", "lower"},
	{"itl-p99-ns", "lower"}, {"e2el-p99-ns", "lower"}, {"tok/s", "higher"}, {"req/s", "higher"},
	{"err-%", "lower"}, {"preemptions", "lower"}, {"ready-ns", "lower"}, {"cold-ttft-ns", "lower"},
	{"knee-conc", "higher"}, {"saturation-conc", "higher"}, {"slo-conc", "higher"}, {"recommended-conc", "higher"},
}

// benchFile describes one generated file.
type benchFile struct {
	name     string
	seed     uint64
	runs     int
	gpu      string
	profiles []string
	// scale multiplies a metric of a point (a simulated code change).
	scale func(point, unit string) float64
	// errPct sets err-% of a point in some runs (run index → percent).
	errPct map[string]map[int]float64
}

// at builds a scale that multiplies the given units at the given points.
func at(points []string, factors map[string]float64) func(string, string) float64 {
	return func(p, unit string) float64 {
		if f, ok := factors[unit]; ok && slices.Contains(points, p) {
			return f
		}
		return 1
	}
}

var saturated = []string{"scenario=concurrency-sweep/conc=16", "scenario=concurrency-sweep/conc=32"}

var benchFiles = []benchFile{
	// The stored baseline: 10 runs.
	{name: "base.txt", seed: 1, runs: 10},
	// Another run of the same code: noise only.
	{name: "noise.txt", seed: 2, runs: 10},
	// Prefill is delayed under load: TTFT rises 20-25% where the sweep saturates.
	{name: "regression.txt", seed: 3, runs: 10, scale: at(saturated, map[string]float64{"ttft-p50-ns": 1.20, "ttft-p99-ns": 1.25})},
	// A faster decode kernel: TPOT, ITL and E2EL fall 10%, throughput rises 10%.
	{name: "improvement.txt", seed: 4, runs: 10, scale: at(
		[]string{"scenario=ttft-tpot/prompt=medium/conc=1", "scenario=concurrency-sweep/conc=8", "scenario=concurrency-sweep/conc=16", "scenario=concurrency-sweep/conc=32"},
		map[string]float64{"tpot-p50-ns": 0.90, "tpot-p99-ns": 0.90, "itl-p99-ns": 0.90, "e2el-p99-ns": 0.90, "tok/s": 1.10, "req/s": 1.10})},
	// Batching is capped lower: throughput falls 12% at saturation while
	// the latency percentiles stay (higher is better for tok/s and req/s).
	{name: "throughput-drop.txt", seed: 5, runs: 10, scale: at(saturated, map[string]float64{"tok/s": 0.88, "req/s": 0.88})},
	// Three runs a side: too few to decide anything.
	{name: "base-3.txt", seed: 6, runs: 3},
	{name: "new-3.txt", seed: 7, runs: 3},
	// The same code on another GPU.
	{name: "other-gpu.txt", seed: 8, runs: 10, gpu: "sim:h100"},
	// Two runs fail 2 of 128 requests at conc=32.
	{name: "errors.txt", seed: 9, runs: 10, errPct: map[string]map[int]float64{"scenario=concurrency-sweep/conc=32": {3: 1.5625, 6: 1.5625}}},
	// A second profile the baseline does not have.
	{name: "two-profiles.txt", seed: 10, runs: 10, profiles: []string{"basic", "low-latency"}},
}

// render writes the file as `go test -bench Perf -count N` prints it.
func (f benchFile) render() []byte {
	rng := rand.New(rand.NewPCG(f.seed, 0x5eed))
	gpu, profiles := f.gpu, f.profiles
	if gpu == "" {
		gpu = "sim:rtx4090"
	}
	if profiles == nil {
		profiles = []string{"basic"}
	}
	var b bytes.Buffer
	b.WriteString("goos: linux\ngoarch: amd64\npkg: github.com/vllmperf/vllmperf\ncpu: AMD EPYC 7B13\n")
	for _, u := range directedUnits {
		fmt.Fprintf(&b, "Unit %s better=%s\n", u.unit, u.better)
	}
	for run := range f.runs {
		for _, profile := range profiles {
			fmt.Fprintf(&b, "backend: sim\ngpu: %s\nmodel: Qwen/Qwen3-0.6B\nvllm-version: 0.11.0-sim\nimage: in-process\n", gpu)
			for _, p := range profilePoints(profile) {
				b.WriteString(f.line(rng, profile, p, run))
			}
		}
	}
	b.WriteString("PASS\nok  \tgithub.com/vllmperf/vllmperf\t812.413s\n")
	return b.Bytes()
}

// line is one benchmark result: b.N = 1, ns/op the run's wall time, the
// metrics sorted by unit as the testing package prints them.
func (f benchFile) line(rng *rand.Rand, profile string, p point, run int) string {
	values := map[string]float64{}
	for _, m := range p.metrics {
		v := m.value * math.Exp(m.cv*rng.NormFloat64())
		if f.scale != nil {
			v *= f.scale(p.name, m.unit)
		}
		values[m.unit] = v
	}
	if e, ok := f.errPct[p.name][run]; ok {
		values["err-%"] = e
	}
	ns := 0.0
	switch {
	case p.requests > 0:
		ns = p.requests / values["req/s"] * 1e9
	case values["ready-ns"] > 0:
		ns = values["ready-ns"] + values["cold-ttft-ns"]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "BenchmarkPerf/profile=%s/%s-2\t%8d", profile, p.name, 1)
	if ns != 0 {
		b.WriteByte('\t')
		prettyPrint(&b, ns, "ns/op")
	}
	units := make([]string, 0, len(values))
	for u := range values {
		units = append(units, u)
	}
	slices.Sort(units)
	for _, u := range units {
		b.WriteByte('\t')
		prettyPrint(&b, values[u], u)
	}
	b.WriteByte('\n')
	return b.String()
}

// prettyPrint formats a metric as the testing package does.
func prettyPrint(b *strings.Builder, x float64, unit string) {
	var format string
	switch y := math.Abs(x); {
	case y == 0 || y >= 999.95:
		format = "%10.0f %s"
	case y >= 99.995:
		format = "%12.1f %s"
	case y >= 9.9995:
		format = "%13.2f %s"
	case y >= 0.99995:
		format = "%14.3f %s"
	case y >= 0.099995:
		format = "%15.4f %s"
	case y >= 0.0099995:
		format = "%16.5f %s"
	case y >= 0.00099995:
		format = "%17.6f %s"
	default:
		format = "%18.7f %s"
	}
	fmt.Fprintf(b, format, x, unit)
}

func TestFixtures(t *testing.T) {
	for _, f := range benchFiles {
		path := filepath.Join("testdata", "bench", f.name)
		got := f.render()
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test -run TestFixtures -update writes it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what fixtures_test.go generates: go test -run TestFixtures -update rewrites it", path)
		}
	}
}
