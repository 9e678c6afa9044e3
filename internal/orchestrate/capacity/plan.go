package capacity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/run/result"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// FromScenario is a capacity scenario's search at size z under scope
// (thresholds.yaml's capacity: and goodput: for its profile and
// scenario): the search's Config and the Runner of its runs, whose Server
// the caller sets.
func FromScenario(sc *scenario.Scenario, z scenario.Size, scope thresholds.Scope) (Config, Runner, error) {
	if sc.Capacity == nil {
		return Config{}, Runner{}, fmt.Errorf("scenario %s is no capacity search: it has no capacity: settings", sc.Name)
	}
	mode, err := ParseMode(sc.Capacity.Over)
	if err != nil {
		return Config{}, Runner{}, fmt.Errorf("scenario %s: capacity: over %w", sc.Name, err)
	}
	slo := stats.SLO{TTFT: scope.Goodput.TTFT, TPOT: scope.Goodput.TPOT, E2EL: scope.Goodput.E2EL}
	cfg := Config{Mode: mode, Start: sc.Capacity.Start, Capacity: scope.Capacity, SLO: slo}
	base := sc.CapacityPoint(z)
	r := Runner{Base: base, Mode: mode, SLO: slo, GoodputMin: scope.Capacity.GoodputMin, Sizing: Sizing{MinRequests: base.Load.Requests, MinDuration: base.Load.Duration, MaxDuration: scope.Capacity.MaxRun},
		Options: []pipeline.Option{pipeline.WithDrainTimeout(scope.Checks.DrainTimeout)}}
	return cfg, r, nil
}

// Plan is one capacity measurement as `vllmperf capacity` makes it: a
// server started (or reached) for a profile, a capacity scenario's
// workload, the search.
type Plan struct {
	Profile  profile.Profile
	Server   []server.Option
	Scenario *scenario.Scenario
	Size     scenario.Size
	// Thresholds gives the SLO and the search's settings.
	Thresholds *thresholds.Set
	// Mode, Start, MaxRuns and MaxTime override the scenario's and the
	// thresholds' when set.
	Mode    Mode
	Start   float64
	MaxRuns int
	MaxTime time.Duration
	// Options go to every run (model, API key); OnRun sees each run.
	Options []pipeline.Option
	OnRun   func(*result.Result, Trial)
}

// search is the plan's search: the scenario's under the thresholds, with
// the plan's overrides, checked.
func (p Plan) search() (Config, Runner, error) {
	cfg, runner, err := FromScenario(p.Scenario, p.Size, p.Thresholds.Scope(p.Profile.Name, p.Scenario.Name))
	if err != nil {
		return cfg, runner, err
	}
	if p.Mode != "" {
		cfg.Mode, runner.Mode = p.Mode, p.Mode
	}
	if p.Start > 0 {
		cfg.Start = p.Start
	}
	if p.MaxRuns > 0 {
		cfg.Capacity.MaxRuns = p.MaxRuns
	}
	if p.MaxTime > 0 {
		cfg.Capacity.MaxTime = p.MaxTime
	}
	return cfg, runner, cfg.Validate()
}

// Run starts the server, runs the search on it and stops the server. The
// result comes with the error when the search stopped part-way.
func (p Plan) Run(ctx context.Context) (res *Result, err error) {
	cfg, runner, err := p.search()
	if err != nil {
		return nil, err
	}
	runner.Options = append(runner.Options, p.Options...)
	if p.OnRun != nil {
		runner.OnRun = func(res *result.Result, t Trial) {
			t.Pass = cfg.Passes(t)
			p.OnRun(res, t)
		}
	}
	srv, err := server.Run(ctx, p.Profile, p.Server...)
	if err != nil {
		return nil, err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		err = errors.Join(err, srv.Close(closeCtx))
	}()
	runner.Server = srv
	return Search(ctx, cfg, runner.Probe)
}
