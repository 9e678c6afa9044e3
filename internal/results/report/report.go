package report

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/vllmperf/vllmperf/internal/gate/render"
	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/results/diagnose"
	"github.com/vllmperf/vllmperf/internal/results/history"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// The files the report writes into a results folder.
const (
	HTMLFile     = "report.html"
	MarkdownFile = "report.md"
)

// Report is what report.html and report.md show, assembled from a results
// folder: the configuration, the concurrency sweeps with their knees, the
// runs with their checks, the diagnosis, and the gate's verdict when the
// folder has one.
type Report struct {
	// Name is the folder's base name (its UTC timestamp for make bench).
	Name string
	// Profiles are the folder's profiles in the order they ran, with
	// their configuration lines.
	Profiles []ProfileConfig
	// Sweeps are the concurrency sweeps, one per profile and scenario.
	Sweeps []Sweep
	// Capacities are the last capacity search of each profile and
	// scenario (docs/capacity.md).
	Capacities []results.Capacity
	// Ramps are the ramp-up runs (the last repetition of each), in run
	// order (docs/load-shapes.md).
	Ramps []RampRun
	// Runs are the last repetition of each run name.
	Runs []results.Run
	// Checks counts every run's checks by status; Failed lists the ones
	// that did not pass, in run order.
	Checks ChecksSummary
	// Diagnosis is what the rules found.
	Diagnosis *diagnose.Diagnosis
	// Gate is gate.json, nil when the folder has none.
	Gate *render.JSONReport
	// History is the history of the folder's setup (vllmperf report
	// --history), nil without one; HistoryLink is the history page's
	// address relative to the report, "" when none was written.
	History     *History
	HistoryLink string
	// Traces are the torch profiler's traces that belong to the folder
	// (traces.go); none when it has none.
	Traces []TraceLink

	folder *results.Folder
}

// ProfileConfig is a profile and its configuration lines.
type ProfileConfig struct {
	Name                                    string
	Backend, GPU, Model, VLLMVersion, Image string
	// Flags says whose flags the server ran with: the profile's, or a
	// deployment's own (the external backend); empty in folders written
	// before the line existed.
	Flags string
	// GPUs is how many GPUs the server used (results.ConfigGPUs); 0 when
	// the folder does not say.
	GPUs int
}

// Sweep is one profile's concurrency sweep.
type Sweep struct {
	Profile, Scenario string
	// Points are the sweep's runs in concurrency order.
	Points []SweepPoint
	// Knee is the sweep's knee, nil when the folder has none for it.
	Knee *results.Knee
}

// SweepPoint is one concurrency of a sweep.
type SweepPoint struct {
	Run         string
	Concurrency int
	// Metrics are the run's figures by bench unit.
	Metrics map[string]float64

	key results.RunKey
}

// Value is the point's figure of unit as a chart or table shows it:
// milliseconds for a duration, else as reported; NaN when missing.
func (p SweepPoint) Value(unit string) float64 {
	v, ok := p.Metrics[unit]
	switch {
	case !ok:
		return math.NaN()
	case units.KindOf(unit) == units.KindNanoseconds:
		return v / 1e6
	}
	return v
}

// ChecksSummary counts checks by status.
type ChecksSummary struct {
	Total    int
	ByStatus map[verdict.Status]int
	// NotApplicable counts the checks that do not apply here
	// (verdict.Check.Applies): outside Total and ByStatus.
	NotApplicable int
	// Failed are the checks that did not pass, with their run.
	Failed []FailedCheck
}

// FailedCheck is a check that did not pass.
type FailedCheck struct {
	Run string
	verdict.Check
}

// Statuses returns the statuses counted, PASS first.
func (c ChecksSummary) Statuses() []verdict.Status {
	return slices.SortedFunc(maps.Keys(c.ByStatus), func(a, b verdict.Status) int {
		if (a == verdict.Pass) != (b == verdict.Pass) {
			if a == verdict.Pass {
				return -1
			}
			return 1
		}
		return cmp.Compare(a, b)
	})
}

// Build assembles the report of folder f, with the gate's verdict when
// gate is not nil, and runs the diagnosis.
func Build(f *results.Folder, g *render.JSONReport) (*Report, error) {
	d, err := diagnose.Run(f, thresholds.DefaultDiagnosis)
	if err != nil {
		return nil, err
	}
	r := &Report{Name: filepath.Base(f.Dir), Runs: LastRuns(f.Summary), Diagnosis: d, Gate: g, folder: f}
	r.Profiles = profileConfigs(f.Summary)
	r.Sweeps = sweeps(f.Summary, r.Runs)
	r.Capacities = LastCapacities(f.Summary)
	if r.Ramps, err = ramps(r.Runs); err != nil {
		return nil, err
	}
	r.Checks = summariseChecks(r.Runs)
	r.Traces = findTraces(f.Dir)
	return r, nil
}

// profileConfigs lists the profiles in the order their first run appears.
func profileConfigs(s *results.Summary) []ProfileConfig {
	var out []ProfileConfig
	seen := map[string]bool{}
	add := func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		c := s.Config[name]
		gpus, _ := strconv.Atoi(c[results.ConfigGPUs])
		out = append(out, ProfileConfig{Name: name, Backend: c["backend"], GPU: c["gpu"], Model: c["model"], VLLMVersion: c["vllm-version"], Image: c["image"], Flags: c["flags"], GPUs: gpus})
	}
	for _, r := range s.Runs {
		add(r.Profile)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Config)) {
		add(name)
	}
	return out
}

// sweeps groups the closed-loop runs of every scenario that has a knee (or
// at least two concurrencies) by profile and scenario.
func sweeps(s *results.Summary, runs []results.Run) []Sweep {
	knees := map[[2]string]*results.Knee{}
	for _, k := range LastKnees(s) {
		knees[[2]string{k.Profile, k.Scenario}] = &k
	}
	var out []Sweep
	idx := map[[2]string]int{}
	for _, r := range runs {
		if r.Rate != "" || r.Concurrency <= 0 || r.Scenario == "" || r.Scenario == benchname.StartupScenario {
			continue
		}
		key := [2]string{r.Profile, r.Scenario}
		i, ok := idx[key]
		if !ok {
			i = len(out)
			idx[key] = i
			out = append(out, Sweep{Profile: r.Profile, Scenario: r.Scenario, Knee: knees[key]})
		}
		out[i].Points = append(out[i].Points, sweepPoint(r))
	}
	var keep []Sweep
	for _, sw := range out {
		if sw.Knee == nil && !distinctConcurrencies(sw.Points) {
			continue
		}
		slices.SortStableFunc(sw.Points, func(a, b SweepPoint) int { return a.Concurrency - b.Concurrency })
		keep = append(keep, sw)
	}
	return keep
}

// distinctConcurrencies reports whether the points sweep at least two
// concurrencies, each once.
func distinctConcurrencies(pts []SweepPoint) bool {
	seen := map[int]bool{}
	for _, p := range pts {
		if seen[p.Concurrency] {
			return false
		}
		seen[p.Concurrency] = true
	}
	return len(seen) >= 2
}

func sweepPoint(r results.Run) SweepPoint {
	return SweepPoint{Run: r.Name, Concurrency: r.Concurrency, key: r.Key(), Metrics: r.Metrics}
}

func summariseChecks(runs []results.Run) ChecksSummary {
	c := ChecksSummary{ByStatus: map[verdict.Status]int{}}
	for _, r := range runs {
		for _, res := range r.Checks {
			if !res.Applies() {
				c.NotApplicable++
				continue
			}
			c.Total++
			c.ByStatus[res.Status]++
			if res.Status != verdict.Pass {
				c.Failed = append(c.Failed, FailedCheck{Run: r.Name, Check: res})
			}
		}
	}
	return c
}

// KneeLine is a sweep's knee in words: "recommended concurrency 8 (knee 8,
// saturation 16, SLO 16)", or why there is none.
func (sw Sweep) KneeLine() string {
	k := sw.Knee
	if k == nil {
		return "no knee computed for this sweep"
	}
	return fmt.Sprintf("recommended concurrency limit %s (knee %s, saturation %s, SLO %s)",
		orNone(k.Recommended), orNone(k.Knee), orNone(k.Saturation), orNone(k.SLOMax))
}

// Key is the folder's setup as a history key filter (history.Filter.Key):
// the configuration lines of its first profile that make a key.
func (r *Report) Key() map[string]string {
	out := map[string]string{}
	if len(r.Profiles) == 0 {
		return out
	}
	cfg := r.folder.Summary.Config[r.Profiles[0].Name]
	for _, k := range history.KeyConfig {
		if v := cfg[k]; v != "" {
			out[k] = v
		}
	}
	return out
}
