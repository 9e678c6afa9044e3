package perfgate

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"time"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// MaxCount caps the count a budget picks.
const MaxCount = 30

// Plan is what a configuration costs: server starts, points and runs,
// and their time estimated from the last results on the same key.
type Plan struct {
	Key       Key
	Profiles  []string
	Scenarios []string
	Size      scenario.Size
	// Points is the measured points per profile (a sweep's knee is no
	// run); Starts and Runs are at Count.
	Points, Starts, Runs, Count int
	// MinCount is the fewest runs a point needs for the gate to decide.
	MinCount int
	// Processes are the go test processes the suite runs as
	// (VLLMPERF_STARTS; 0 or 1: one): each profile's runs on that many
	// server starts, as the minimum detectable effects assume.
	Processes int
	// Estimate is the time of the runs the history knows; Unknown counts
	// the points and starts it does not (no history: all of them).
	Estimate time.Duration
	Unknown  int
	// History names the file the estimate comes from ("" for none).
	History string
	// Budget, when set, picked Count; Note says how.
	Budget time.Duration
	Note   string
	// MinimumEffects are the judged metrics' spreads from the history,
	// whose minimum detectable effects Write prints at Count (plan_mde.go).
	MinimumEffects []gate.MDE
	// SpreadFrom says where MinimumEffects' spreads come from: the
	// history, or the prior (plan_prior.go) when there is none.
	SpreadFrom string
	// NoPrior names the profiles the prior has no spread for.
	NoPrior []string
	// Prediction is the cost from the simulator (prediction.go), made
	// when the history does not know every benchmark; nil otherwise.
	Prediction *Prediction

	startEach, pointsEach time.Duration // one count's known time
}

// NewPlan plans cfg's run at count on key, estimating from history (a
// benchfmt file of an earlier run on the key; "" for none).
func NewPlan(cfg suite.Config, key Key, count int, history string) (*Plan, error) {
	p := &Plan{Key: key, Profiles: cfg.Profiles, Scenarios: cfg.Scenarios, Size: cfg.Size, History: history}
	var names []string // every measured benchmark of one count
	for _, prof := range cfg.Profiles {
		names = append(names, benchname.Name{Profile: prof, Scenario: benchname.StartupScenario}.String())
		for _, sc := range cfg.Scenarios {
			s, err := scenario.Builtin(sc)
			if err != nil {
				return nil, err
			}
			for _, pt := range s.Points(cfg.Size) {
				names = append(names, benchname.Name{Profile: prof, Scenario: sc, Point: pt.Key}.String())
			}
		}
	}
	p.Points = (len(names) - len(cfg.Profiles)) / max(len(cfg.Profiles), 1)
	gated := 0
	for _, u := range units.All() {
		if u.Gated() {
			gated++
		}
	}
	p.MinCount = gate.MinRuns(cfg.Thresholds.Gate("", "", ""), len(names)*gated)
	if err := p.estimate(names); err != nil {
		return nil, err
	}
	if err := p.minimumEffects(cfg.Thresholds); err != nil {
		return nil, err
	}
	p.SetCount(count)
	return p, nil
}

// estimate reads one count's time per benchmark from the history: the
// median ns/op (a point's duration; a start's readiness).
func (p *Plan) estimate(names []string) error {
	durations := map[string][]float64{}
	if p.History != "" {
		in, err := input.ReadFile(p.History)
		if err != nil {
			return fmt.Errorf("the plan's history: %w", err)
		}
		for _, r := range in.Results {
			name := procs.ReplaceAllString(benchname.Short(string(r.Name)), "")
			for _, v := range r.Values {
				if v.Unit == "sec/op" {
					durations[name] = append(durations[name], v.Value)
				}
			}
		}
	}
	for _, n := range names {
		d, ok := durations[n]
		if !ok {
			p.Unknown++
			continue
		}
		slices.Sort(d)
		each := time.Duration(d[len(d)/2] * float64(time.Second))
		if bn, _ := benchname.Parse(n); bn.Scenario == benchname.StartupScenario {
			p.startEach += each
		} else {
			p.pointsEach += each
		}
	}
	return nil
}

// procs is go test's -N GOMAXPROCS suffix.
var procs = regexp.MustCompile(`-\d+$`)

// SetCount sets the count and what follows from it.
func (p *Plan) SetCount(count int) {
	p.Count = count
	p.Starts = len(p.Profiles) * count // every repetition of scenario=startup is a start
	p.Runs = len(p.Profiles) * p.Points * count
	p.Estimate = time.Duration(count) * (p.startEach + p.pointsEach)
}

// ApplyBudget picks the count that fits budget (at least MinCount, at
// most MaxCount); without history it keeps the count it has.
func (p *Plan) ApplyBudget(budget time.Duration) {
	p.Budget = budget
	per := p.startEach + p.pointsEach
	switch {
	case budget <= 0:
		return
	case p.Unknown > 0 || per <= 0:
		p.Note = fmt.Sprintf("budget %v: no history for %d benchmarks on this key, count %d kept", budget, p.Unknown, p.Count)
		return
	}
	fits := int(math.Floor(float64(budget) / float64(per)))
	count := min(max(fits, p.MinCount), MaxCount)
	p.Note = fmt.Sprintf("budget %v fits %d runs a point at %v each; count %d", budget, fits, per.Round(time.Second), count)
	if fits < p.MinCount {
		p.Note += fmt.Sprintf(" (the gate needs %d: over budget by %v)", p.MinCount, (time.Duration(p.MinCount)*per - budget).Round(time.Second))
	}
	p.SetCount(count)
}

// Write states the plan in a few lines.
func (p *Plan) Write(w io.Writer) error {
	est := p.timeWords()
	hist := p.History
	if hist == "" {
		hist = "none"
	}
	_, err := fmt.Fprintf(w, "plan: key %s\nplan: %d profiles × %d points (%s size), count %d: %d server starts, %d runs; time %s (history: %s)\nplan: the gate needs count ≥ %d to decide\n",
		p.Key, len(p.Profiles), p.Points, p.Size, p.Count, p.Starts, p.Runs, est, hist, p.MinCount)
	if err == nil && p.Note != "" {
		_, err = fmt.Fprintf(w, "plan: %s\n", p.Note)
	}
	if err == nil && p.Prediction != nil {
		err = p.Prediction.Write(w)
	}
	if err == nil {
		err = p.writeMinimumEffects(w)
	}
	return err
}

// timeWords says the plan's time once: measured from the key's history,
// or the prediction's (written below it) where benchmarks have none, or
// unknown where there is no prediction either.
func (p *Plan) timeWords() string {
	predicted := p.Prediction != nil && p.Prediction.Err == nil
	switch {
	case p.Unknown == 0:
		return "about " + p.Estimate.Round(time.Second).String()
	case predicted && p.Estimate > 0:
		return fmt.Sprintf("predicted below (%d benchmarks without history on this key; those with history: %v)", p.Unknown, p.Estimate.Round(time.Second))
	case predicted:
		return "predicted below (no earlier run on this key)"
	case p.Estimate > 0:
		return fmt.Sprintf("at least %v (%d benchmarks without history, and no prediction)", p.Estimate.Round(time.Second), p.Unknown)
	}
	return "unknown (no earlier run on this key, and no prediction)"
}
