package perfgate

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/orchestrate/predict"
	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/outfile"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/internal/vocab/cliarg"
)

// PredictionFile is the key's record of the last prediction beside what
// the run took (the store's folder, next to the baseline).
const PredictionFile = "prediction.json"

// Prediction is the plan's cost from the simulator: every profile's
// points in simulated time on the preset of the runner's GPU, its start
// measured (the key's history) or modelled.
type Prediction struct {
	// GPU is the name the preset was chosen from, Preset the preset.
	GPU, Preset string
	Count       int
	Profiles    []predict.Profile
	// Capacity names the capacity searches, whose runs the search picks
	// as it goes: not predicted.
	Capacity []string
	// Err says why there is no prediction (no GPU name, no preset).
	Err error
}

// Each is one count of profile i.
func (pr *Prediction) Each(i int) time.Duration { return pr.Profiles[i].Each() }

// Wall is the whole run's time: the profiles one after another, Count
// times each.
func (pr *Prediction) Wall() time.Duration {
	var d time.Duration
	for i := range pr.Profiles {
		d += pr.Each(i)
	}
	return d * time.Duration(pr.Count)
}

// GPUMinutes is the GPU time: each profile's time by the GPUs its server
// holds.
func (pr *Prediction) GPUMinutes() float64 {
	var m float64
	for i, p := range pr.Profiles {
		m += pr.Each(i).Minutes() * float64(p.GPUs) * float64(pr.Count)
	}
	return m
}

// predictionPreset is the preset to predict on: the key's GPU name
// mapped to a preset; the simulator's own preset (--sim-gpu among the
// simulator's arguments, else its default) when the suite runs the
// simulator.
func predictionPreset(cfg suite.Config, key Key) (gpu, preset string, sim bool, err error) {
	if key.GPU != "none" || (cfg.Backend == server.KindContainer && key.Image != server.SimImage) {
		p, err := predict.PresetFor(key.GPU)
		return key.GPU, p, false, err
	}
	gpu = presets.DefaultGPU
	if v, ok := cliarg.SimGPU.Value(cfg.SimArgs); ok {
		gpu = v
	}
	return "sim:" + gpu, gpu, true, nil
}

// NewPrediction predicts cfg's run at count on key's GPU; history (a
// benchfmt file of an earlier run on the key, "" for none) gives the
// measured starts.
func NewPrediction(cfg suite.Config, key Key, count int, history string) *Prediction {
	pr := &Prediction{Count: count}
	var sim bool
	pr.GPU, pr.Preset, sim, pr.Err = predictionPreset(cfg, key)
	if pr.Err != nil {
		return pr
	}
	var scs []*scenario.Scenario
	for _, name := range cfg.Scenarios {
		sc, err := scenario.Builtin(name)
		if err != nil {
			pr.Err = err
			return pr
		}
		if sc.Capacity != nil {
			pr.Capacity = append(pr.Capacity, name)
		}
		scs = append(scs, sc)
	}
	starts := measuredStarts(history)
	model := ""
	if key.Model != "default" {
		model = key.Model
	}
	for _, name := range cfg.Profiles {
		prof, err := profile.Resolve(name)
		if err != nil {
			pr.Err = err
			return pr
		}
		prof = prof.WithSimArgs(cfg.SimArgs...)
		got, err := predict.PredictProfile(prof, scs, predict.Settings{Preset: pr.Preset, Model: model, Size: cfg.Size, Seed: 1, Simulator: sim})
		if err != nil {
			pr.Err = err
			return pr
		}
		if d, ok := starts[name]; ok {
			got.Start, got.StartFrom = d, predict.Measured
		}
		pr.Profiles = append(pr.Profiles, got)
	}
	return pr
}

// measuredStarts reads each profile's median ready time (scenario=startup's
// ready-ns, which benchfmt reads as ready-sec) from a benchfmt file; none
// when there is no file or no start.
func measuredStarts(history string) map[string]time.Duration {
	out := map[string]time.Duration{}
	if history == "" {
		return out
	}
	in, err := input.ReadFile(history)
	if err != nil {
		return out
	}
	ready := map[string][]float64{}
	for _, r := range in.Results {
		bn, err := benchname.Parse(procs.ReplaceAllString(benchname.Short(string(r.Name)), ""))
		if err != nil || bn.Scenario != benchname.StartupScenario {
			continue
		}
		for _, v := range r.Values {
			if v.Unit == "ready-sec" {
				ready[bn.Profile] = append(ready[bn.Profile], v.Value)
			}
		}
	}
	for p, v := range ready {
		slices.Sort(v)
		out[p] = time.Duration(v[len(v)/2] * float64(time.Second))
	}
	return out
}

// Write states the prediction: a line per profile and the total.
func (pr *Prediction) Write(w io.Writer) error {
	if pr.Err != nil {
		_, err := fmt.Fprintf(w, "plan: no prediction: %v\n", pr.Err)
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "plan: predicted on the simulator's %s preset (GPU %q), simulated time, count %d:\n", pr.Preset, pr.GPU, pr.Count)
	for i, p := range pr.Profiles {
		each := pr.Each(i)
		fmt.Fprintf(&b, "plan:   %-16s %3d points, start %v %s; %v a count; %v (%.1f GPU-min on %d GPU)\n",
			p.Name, len(p.Points), p.Start.Round(time.Second), p.StartFrom, each.Round(time.Second),
			(each * time.Duration(pr.Count)).Round(time.Second), each.Minutes()*float64(p.GPUs*pr.Count), p.GPUs)
	}
	fmt.Fprintf(&b, "plan: predicted total %v wall, %.1f GPU-min (profiles one after another on one GPU set)\n", pr.Wall().Round(time.Second), pr.GPUMinutes())
	if len(pr.Capacity) > 0 {
		fmt.Fprintf(&b, "plan: not predicted: the capacity searches %s (their runs are picked as the search goes)\n", strings.Join(pr.Capacity, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// PredictionRecord is a prediction beside what the run took, kept with
// the key's baseline (PredictionFile) so that the next plan, and people,
// can see how far off the last one was.
type PredictionRecord struct {
	Key        Key       `json:"key"`
	RecordedAt time.Time `json:"recorded_at"`
	Preset     string    `json:"preset"`
	Count      int       `json:"count"`
	// PredictedSec and ActualSec are the run's wall time, predicted and
	// measured (go test -bench Perf from start to end); Ratio is actual
	// over predicted.
	PredictedSec float64 `json:"predicted_sec"`
	ActualSec    float64 `json:"actual_sec"`
	Ratio        float64 `json:"ratio"`
	// Profiles are each profile's points' seconds (the Σ of their ns/op
	// over the count: the measured phase and the harness's work around
	// it), predicted and measured.
	Profiles []ProfileRecord `json:"profiles"`
}

// ProfileRecord is one profile's measured-phase time, predicted and run.
type ProfileRecord struct {
	Profile      string  `json:"profile"`
	PredictedSec float64 `json:"predicted_sec"`
	ActualSec    float64 `json:"actual_sec"`
}

// Compare sets the prediction beside a run that took wall and wrote
// bench (benchfmt): its ratio and each profile's points' time.
func (pr *Prediction) Compare(key Key, wall time.Duration, bench string) (PredictionRecord, error) {
	rec := PredictionRecord{Key: key, RecordedAt: time.Now().UTC(), Preset: pr.Preset, Count: pr.Count,
		PredictedSec: pr.Wall().Seconds(), ActualSec: wall.Seconds()}
	if rec.PredictedSec > 0 {
		rec.Ratio = rec.ActualSec / rec.PredictedSec
	}
	in, err := input.ReadFile(bench)
	if err != nil {
		return rec, err
	}
	actual := map[string]float64{}
	for _, r := range in.Results {
		bn, err := benchname.Parse(procs.ReplaceAllString(benchname.Short(string(r.Name)), ""))
		if err != nil || bn.Scenario == benchname.StartupScenario || bn.Point == "" {
			continue
		}
		for _, v := range r.Values {
			if v.Unit == "sec/op" {
				actual[bn.Profile] += v.Value
			}
		}
	}
	for _, p := range pr.Profiles {
		var measured time.Duration
		for _, pt := range p.Points {
			measured += pt.Total() // a point's ns/op: its warm-up, its load and the scrapes, drain and sampler after it
		}
		rec.Profiles = append(rec.Profiles, ProfileRecord{Profile: p.Name,
			PredictedSec: measured.Seconds() * float64(pr.Count), ActualSec: actual[p.Name]})
	}
	return rec, nil
}

// SavePrediction keeps rec in the key's folder of the store.
func (s Store) SavePrediction(rec PredictionRecord) error {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	path := s.Path(rec.Key, PredictionFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return outfile.ReplaceBytes(path, 0o644, append(data, '\n'))
}

// keepPrediction compares the plan's prediction (nil: none was made)
// with the run, says how far off it was, and keeps the record in the
// store; a failure to keep it is a warning, never the run's failure.
func (o Options) keepPrediction(key Key, pr *Prediction, wall time.Duration, bench string) {
	if pr == nil || pr.Err != nil {
		return
	}
	rec, err := pr.Compare(key, wall, bench)
	if err == nil {
		err = o.Store.SavePrediction(rec)
	}
	if err != nil {
		fmt.Fprintf(o.Stderr, "perf-gate: warning: keeping the prediction beside the run: %v\n", err)
		return
	}
	fmt.Fprintf(o.Stdout, "perf-gate: predicted %v, took %v (×%.2f); kept in %s\n",
		pr.Wall().Round(time.Second), wall.Round(time.Second), rec.Ratio, o.Store.Path(key, PredictionFile))
}
