package capacity

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/gateway"
	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/vocab/setting"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// ErrUsage marks an Options error: the command was called wrong.
var ErrUsage = errors.New("usage")

// DefaultScenario is the capacity scenario `vllmperf capacity` runs.
const DefaultScenario = "slo-capacity"

// Options are `vllmperf capacity`'s flags, before they are checked.
type Options struct {
	// Target is a running server's URL; else Backend (or the environment's
	// VLLMPERF_BACKEND) starts one for Profile, with SimArgs appended to a
	// simulator's command line.
	Target, Backend, Profile, Model, SimArgs string
	APIKey                                   string
	// Gateway is how Target is reached: headers, CA and client
	// certificates, over the environment's (package gateway).
	Gateway gateway.Overrides
	// Scenario, Size and Thresholds name the capacity scenario, its size
	// and the thresholds file ("" for ./thresholds.yaml or the built-in).
	Scenario, Size, Thresholds string
	// Over, Start, MaxRuns and MaxTime override the scenario's and the
	// thresholds'.
	Over    string
	Start   float64
	MaxRuns int
	MaxTime time.Duration
	// Log receives the server's log lines and the runs' progress, unless
	// Quiet (nil: nothing).
	Log   io.Writer
	Quiet bool
	// NoOverloadStop runs every level to its end however overloaded the
	// server (pipeline.WithoutOverloadStop); runs whose SLO verdict is
	// certain are still cut.
	NoOverloadStop bool
}

// Run checks the options, runs the plan and writes its Report to w. The
// result comes with the error when the search stopped part-way; errors in
// the options wrap ErrUsage.
func (o Options) Run(ctx context.Context, w io.Writer) (*Result, error) {
	if o.Quiet {
		o.Log = nil
	}
	p, err := o.Plan()
	if err != nil {
		return nil, err
	}
	res, err := p.Run(ctx)
	if res != nil {
		err = errors.Join(err, Report(w, res))
	}
	return res, err
}

// settingError words an error about the options, naming them by field
// (package setting): {MaxRuns}.
var settingError = setting.Scope("capacity")

// Plan checks the options and returns the plan they describe; its errors
// wrap ErrUsage and name the option by its field (package setting).
func (o Options) Plan() (Plan, error) {
	var p Plan
	var err error
	usage := func(field string, err error) (Plan, error) {
		return Plan{}, fmt.Errorf("%w: %w", ErrUsage, settingError("{"+field+"} %w", err))
	}
	if p.Thresholds, err = thresholds.Resolve(o.Thresholds, "."); err != nil {
		return usage("Thresholds", err)
	}
	if p.Scenario, err = scenario.Builtin(o.Scenario); err != nil {
		return usage("Scenario", err)
	}
	if p.Scenario.Capacity == nil {
		return usage("Scenario", fmt.Errorf("%s is no capacity search (it has no capacity: settings): try %s", o.Scenario, DefaultScenario))
	}
	if p.Size, err = scenario.ParseSize(o.Size); err != nil {
		return usage("Size", err)
	}
	if o.Over != "" {
		if p.Mode, err = ParseMode(o.Over); err != nil {
			return usage("Over", err)
		}
	}
	if o.Start < 0 {
		return usage("Start", fmt.Errorf("%v: want a positive first level (0: the scenario's)", o.Start))
	}
	if o.MaxRuns < 0 || o.MaxRuns == 1 {
		return usage("MaxRuns", fmt.Errorf("%d: want at least 2 runs, one passing and one failing (0: thresholds.yaml's)", o.MaxRuns))
	}
	if o.MaxTime < 0 {
		return usage("MaxTime", fmt.Errorf("%v: want a positive time budget such as 10m (0: thresholds.yaml's capacity.max_time)", o.MaxTime))
	}
	p.Start, p.MaxRuns, p.MaxTime = o.Start, o.MaxRuns, o.MaxTime
	if p.Server, err = o.serverOptions(); err != nil {
		return usage("Backend} or {Target", err)
	}
	if p.Profile, err = o.profile(); err != nil {
		return usage("Profile", err)
	}
	cfg, _, err := p.search()
	if err != nil {
		return Plan{}, fmt.Errorf("%w: capacity search: %w", ErrUsage, err)
	}
	p.Options = []pipeline.Option{pipeline.WithAPIKey(o.APIKey), pipeline.WithModel(o.Model)}
	if o.NoOverloadStop {
		p.Options = append(p.Options, pipeline.WithoutOverloadStop())
	}
	if o.Log != nil {
		p.OnRun = progressLog(o.Log, cfg, time.Now)
	}
	return p, nil
}

// serverOptions are the environment's server options, then the flags'.
func (o Options) serverOptions() ([]server.Option, error) {
	opts, err := server.FromEnv()
	if err != nil {
		return nil, err
	}
	if o.Backend != "" {
		k, err := server.ParseKind(o.Backend)
		if err != nil {
			return nil, err
		}
		opts = append(opts, server.WithBackend(k))
	}
	if o.Target != "" {
		base, _, err := server.ParseTarget(o.Target)
		if err != nil {
			return nil, err
		}
		opts = append(opts, server.WithBackend(server.KindExternal), server.WithTarget(base))
	}
	if o.Gateway.Given() {
		if o.Target == "" {
			return nil, settingError("{Headers}, {CACert}, {ClientCert} and {ClientKey} say how to reach a running server: give {Target} too")
		}
		g, err := o.Gateway.Gateway()
		if err != nil {
			return nil, err
		}
		opts = append(opts, server.WithGateway(g))
	}
	if o.Model != "" {
		opts = append(opts, server.WithModel(o.Model))
	}
	if o.Log != nil {
		opts = append(opts, server.WithLog(o.Log))
	}
	return append(opts, server.WithAPIKey(o.APIKey)), nil
}

// profile is the profile to start, with SimArgs; a running server's own
// flags when Target is given.
func (o Options) profile() (profile.Profile, error) {
	if o.Target != "" {
		if o.SimArgs != "" {
			return profile.Profile{}, settingError("and {SimArgs}: a running server is not started, so no simulator flags apply")
		}
		return profile.Deployment(""), nil
	}
	p, err := profile.Resolve(o.Profile)
	if err != nil {
		return p, err
	}
	return p.WithSimArgs(strings.Fields(o.SimArgs)...), nil
}

// Report writes the result: the statement, then the runs behind it.
func Report(w io.Writer, r *Result) error {
	if _, err := fmt.Fprintf(w, "%s\n\n", r.Statement()); err != nil {
		return err
	}
	return r.WriteTable(w)
}
