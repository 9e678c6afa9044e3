package upgrade

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"golang.org/x/perf/benchfmt"
)

// benchFile writes one side's runs in the suite's bench format
// (docs/bench-format.md) as they finish, so that a crash keeps what ran
// and a comparison can read the file back.
type benchFile struct {
	path string
	f    *os.File
	w    *benchfmt.Writer
}

// createBenchFile creates path and writes the Unit lines (`Unit X
// better=…`) that carry the metrics' directions.
func createBenchFile(path string, unitLines []string) (*benchFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if len(unitLines) > 0 {
		if _, err := fmt.Fprintln(f, strings.Join(unitLines, "\n")); err != nil {
			f.Close()
			return nil, err
		}
	}
	return &benchFile{path: path, f: f, w: benchfmt.NewWriter(f)}, nil
}

// add writes one run: its server's configuration lines (written again
// only when they change), then the line BenchmarkPerf/NAME-N 1 v unit …,
// named as `go test` names it (N is GOMAXPROCS when it is not 1).
func (b *benchFile) add(config [][2]string, name string, metrics map[string]float64) error {
	r := &benchfmt.Result{Name: benchfmt.Name(benchname.Bench + "/" + name + procSuffix()), Iters: 1}
	for _, kv := range config {
		r.Config = append(r.Config, benchfmt.Config{Key: kv[0], Value: []byte(kv[1]), File: true})
	}
	units := make([]string, 0, len(metrics))
	for u := range metrics {
		units = append(units, u)
	}
	slices.Sort(units)
	for _, u := range units {
		r.Values = append(r.Values, benchfmt.Value{Value: metrics[u], Unit: u})
	}
	if len(r.Values) == 0 {
		return fmt.Errorf("%s: run %s reported no metric", b.path, name)
	}
	if err := b.w.Write(r); err != nil {
		return fmt.Errorf("%s: %w", b.path, err)
	}
	return nil
}

func (b *benchFile) close() error { return b.f.Close() }

// procSuffix is the -N suffix `go test` adds to benchmark names.
func procSuffix() string {
	if n := runtime.GOMAXPROCS(0); n != 1 {
		return fmt.Sprintf("-%d", n)
	}
	return ""
}
