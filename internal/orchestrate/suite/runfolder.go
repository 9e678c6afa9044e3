package suite

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/vllmperf/vllmperf/internal/orchestrate/record"
	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/results/report"
	"github.com/vllmperf/vllmperf/internal/run/check"
	"github.com/vllmperf/vllmperf/internal/run/result"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/internal/vocab/setting"
)

// RunScenario names the scenario of a run of `vllmperf run` in its
// results folder; RunSize is its size line (no suite size applies).
const (
	RunScenario = "run"
	RunSize     = scenario.Size("run")
)

// RunFolder is the results folder of one `vllmperf run --results DIR`:
// the files the suite writes (summary.json, samples.jsonl,
// timeseries.jsonl, bench.txt) and report.html and report.md, so that
// `vllmperf report`, `gate` and `history add` read it as a suite's.
type RunFolder struct {
	w        *results.Writer
	recorded bool
}

// settingError words an error about the suite's settings, naming them by
// field (package setting): {Results} is where a run's folder goes.
var settingError = setting.Scope("suite")

// CreateRunFolder creates dir for one run, before any request is sent:
// a folder that already holds results is refused. An empty dir is no
// folder (nil, nil).
func CreateRunFolder(dir string) (*RunFolder, error) {
	if dir == "" {
		return nil, nil
	}
	w, err := results.Create(dir)
	if err != nil {
		return nil, settingError("{Results}: %w", err)
	}
	return &RunFolder{w: w}, nil
}

// Record writes res, the run of point on srv (started with profile p, or
// a deployment's), with the suite's configuration lines and checks
// (thresholds.yaml's, as the suite finds it), then the report. A nil
// folder records nothing.
func (f *RunFolder) Record(ctx context.Context, srv server.Server, p profile.Profile, res *result.Result) error {
	if f == nil {
		return nil
	}
	f.recorded = true
	set, err := thresholdsFromEnv()
	if err != nil {
		return settingError("{Results}: %w", err)
	}
	s := &Suite{cfg: Config{Size: RunSize, Thresholds: set}}
	ss := &Session{suite: s, Profile: p, Server: srv}
	if !p.Deployment {
		ss.StartID = fmt.Sprintf("%016x", rand.Uint64())
	}
	ss.ConfigLines = s.configLines(ctx, ss)
	cfg := map[string]string{}
	for _, kv := range ss.ConfigLines {
		cfg[kv[0]] = kv[1]
	}
	if !p.Deployment {
		cfg[results.ConfigGPUs] = strconv.Itoa(gpus(p))
	}
	f.w.SetConfig(p.Name, cfg)
	name := benchname.Name{Profile: p.Name, Scenario: RunScenario, Point: pointName(res.Point)}.String()
	metrics := res.Metrics()
	record.Add(f.w, name, p.Name, res, metrics, check.All(res, set.Scope(p.Name, RunScenario), ss.facts()))
	if err := f.w.Close(); err != nil {
		return err
	}
	if err := f.writeBench(s, ss.ConfigLines, name, metrics); err != nil {
		return err
	}
	_, err = report.WriteFolder(f.w.Dir())
	return err
}

// Discard removes the folder's empty files, and the folder when nothing
// else is in it, unless Record ran: a run that never got to recording
// leaves no folder that a next run would be refused.
func (f *RunFolder) Discard() {
	if f == nil || f.recorded {
		return
	}
	for _, name := range []string{results.SamplesFile, results.TimeSeriesFile} {
		_ = os.Remove(filepath.Join(f.w.Dir(), name))
	}
	_ = os.Remove(f.w.Dir()) // only when empty
}

// writeBench writes bench.txt: the Unit lines, the configuration lines and
// the run's one benchmark line, as go test would print them.
func (f *RunFolder) writeBench(s *Suite, config [][2]string, name string, metrics map[string]float64) error {
	var buf bytes.Buffer
	buf.WriteString(strings.Join(s.UnitLines(), "\n") + "\n")
	r := &benchfmt.Result{Name: benchfmt.Name(benchname.Bench + "/" + name), Iters: 1}
	for _, kv := range config {
		r.Config = append(r.Config, benchfmt.Config{Key: kv[0], Value: []byte(kv[1]), File: true})
	}
	for _, u := range slices.Sorted(maps.Keys(metrics)) {
		r.Values = append(r.Values, benchfmt.Value{Value: metrics[u], Unit: u})
	}
	if err := benchfmt.NewWriter(&buf).Write(r); err != nil {
		return settingError("{Results}: %w", err)
	}
	return results.WriteBench(f.w.Dir(), buf.Bytes())
}

// pointName names a run's point by its load: conc=N, or rate=R with
// cap=N when --max-concurrency caps it.
func pointName(p scenario.Point) string {
	l := p.Load
	switch {
	case l.Rate > 0 && l.MaxConcurrency > 0:
		return fmt.Sprintf("rate=%s/cap=%d", scenario.FormatRate(l.Rate), l.MaxConcurrency)
	case l.Rate > 0:
		return "rate=" + scenario.FormatRate(l.Rate)
	case l.Concurrency > 0:
		return fmt.Sprintf("conc=%d", l.Concurrency)
	}
	return "dataset" // a trace's own arrivals
}
