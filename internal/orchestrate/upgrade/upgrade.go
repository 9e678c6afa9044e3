package upgrade

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/gate/sequential"
	"github.com/vllmperf/vllmperf/internal/orchestrate/parity"
	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/target/torchprof"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// Defaults of Config.
const (
	// DefaultMinPairs is the first comparison's pairs: thresholds.yaml's
	// default min_samples, the fewest runs a side that can decide.
	DefaultMinPairs = 6
	// DefaultMaxPairs caps the pairs: past it the gate says UNKNOWN.
	DefaultMaxPairs = 20
)

// ConfigKeys are the configuration keys OLD and NEW must agree on:
// gate.DefaultConfigKeys without image, which differs by design.
var ConfigKeys = []string{"gpu", "model", "backend"}

// The files Run writes in Config.Dir (besides the sides' results folders
// old/ and new/, as the suite writes them).
const (
	OldFile = "old.txt"
	NewFile = "new.txt"
)

// ErrSettings is wrapped by the errors about the gate's settings (sides,
// points, pairs, lifecycle): the caller's input is wrong, nothing ran.
var ErrSettings = errors.New("upgrade gate settings")

// Config is what Run needs.
type Config struct {
	// Suite is the base configuration of both sides: the environment's
	// server options, API key, size, thresholds and the simulator
	// arguments both sides get. Run sets Profiles, Scenarios and
	// ResultsDir per side, and adds each Side's options after the
	// environment's.
	Suite suite.Config
	// Old and New are the servers compared: NEW is gated against OLD.
	Old, New Side
	// Points select the scenario points (SelectPoints); nil is
	// DefaultPoints.
	Points []string
	// Catalog is where points come from; the zero value is Builtin().
	Catalog Catalog
	// MinPairs is the first comparison's pairs (DefaultMinPairs when 0);
	// MaxPairs the cap (DefaultMaxPairs when 0).
	MinPairs, MaxPairs int
	// Servers is the lifecycle ("" is DefaultServers).
	Servers Servers
	// Dir receives old.txt, new.txt and the sides' results folders
	// old/ and new/. Required; a folder that already holds old.txt is
	// refused.
	Dir string
	// Log receives progress lines (nil: none).
	Log io.Writer
	// TorchProfile, when set, captures profiler traces of the regressed
	// points of a DIFFERENT verdict (traces.go).
	TorchProfile *torchprof.Settings

	// starter replaces the suites' servers in tests.
	starter starter
}

// Round is one comparison of the adaptive gate.
type Round struct {
	// Pairs is the pairs per point compared.
	Pairs int
	// Decision is the comparison's: DIFFERENT, SAME or UNKNOWN.
	Decision gate.Decision
	// Summary is the report's headline.
	Summary string
	// RunsNeeded is the report's estimate for an UNKNOWN round.
	RunsNeeded int
}

// Result is what Run found.
type Result struct {
	// Report is the last comparison (NEW gated against OLD).
	Report *gate.Report
	// Rounds are every comparison, in order.
	Rounds []Round
	// Pairs is the pairs per point in the last comparison; Starts how
	// many servers were started.
	Pairs, Starts int
	// OldFile and NewFile are the bench files compared.
	OldFile, NewFile string
	// Parity is the output parity check's comparison (nil when
	// thresholds.yaml's parity: sends no prompts); ParityFailures are its
	// reasons to fail the upgrade, whatever Decision says.
	Parity         *parity.Report
	ParityFailures []string
	// Traces are the profiler's captures of the regressed points
	// (Config.TorchProfile).
	Traces []TraceCapture
}

// Decision is the last comparison's decision.
func (r *Result) Decision() gate.Decision { return r.Report.Decision() }

// Headline says what was decided after how many pairs: "DIFFERENT after 10
// pairs (6 → 10): FAIL: 2 regressions, …".
func (r *Result) Headline() string {
	steps := make([]string, len(r.Rounds))
	for i, rd := range r.Rounds {
		steps[i] = fmt.Sprint(rd.Pairs)
	}
	s := fmt.Sprintf("%s after %d pairs", r.Decision(), r.Pairs)
	if len(steps) > 1 {
		s += " (" + strings.Join(steps, " → ") + ")"
	}
	return s + ": " + r.Report.Headline()
}

// Run runs the upgrade gate: pairs of OLD and NEW blocks over the selected
// points, compared after MinPairs and again, with more pairs, while the
// decision is UNKNOWN and MaxPairs is not reached. Its error is about the
// settings (wrapping ErrSettings), the comparison's input (a
// *gate.MismatchError when the sides ran on different GPUs or models), or a
// run that could not be made; a regression is not an error but the
// Result's decision.
func Run(ctx context.Context, cfg Config) (res *Result, err error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	targets, err := SelectPoints(cfg.Catalog, cfg.Suite.Size, cfg.Points)
	if err != nil {
		return nil, err
	}
	r, err := newRunner(cfg, targets)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := r.close(ctx); cerr != nil && err == nil {
			err = cerr
		}
	}()
	return r.run(ctx)
}

// fill applies the defaults and checks the settings.
func (c *Config) fill() error {
	if c.Points == nil {
		c.Points = DefaultPoints
	}
	if c.Catalog.Scenario == nil {
		c.Catalog = Builtin()
	}
	if c.MinPairs == 0 {
		c.MinPairs = DefaultMinPairs
	}
	if c.MaxPairs == 0 {
		c.MaxPairs = max(DefaultMaxPairs, c.MinPairs)
	}
	if c.Servers == "" {
		c.Servers = DefaultServers
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	switch {
	case c.MinPairs < 1:
		return fmt.Errorf("%w: min pairs %d: want at least 1 (%d, the default min_samples, is the fewest that can decide)", ErrSettings, c.MinPairs, DefaultMinPairs)
	case c.MaxPairs < c.MinPairs:
		return fmt.Errorf("%w: max pairs %d is below min pairs %d", ErrSettings, c.MaxPairs, c.MinPairs)
	case c.Servers != Restart && c.Servers != Keep:
		_, err := ParseServers(string(c.Servers))
		return err
	case c.Dir == "":
		return fmt.Errorf("%w: no results folder for old.txt and new.txt", ErrSettings)
	}
	if _, err := os.Stat(filepath.Join(c.Dir, OldFile)); err == nil {
		return fmt.Errorf("%w: %s already holds %s: give a new folder, so that two gates' runs never mix", ErrSettings, c.Dir, OldFile)
	}
	if c.Servers == Keep && c.Old.backend() != server.KindSim {
		return fmt.Errorf("%w: servers %s keeps OLD's and NEW's containers up together, but one server per GPU set runs at a time (a vLLM container takes most of its GPUs' memory): use %s", ErrSettings, Keep, Restart)
	}
	return checkSides([2]Side{c.Old, c.New})
}

// runner is one gate in progress.
type runner struct {
	cfg       Config
	profiles  []string
	byProfile map[string][]Target
	suites    [2]*suite.Suite // nil with a test starter
	files     [2]*benchFile
	pool      *pool
	done      map[string]int // pairs done per profile
	parity    *parityRun     // nil: no output parity check
}

func newRunner(cfg Config, targets []Target) (_ *runner, err error) {
	r := &runner{cfg: cfg, profiles: profilesOf(targets), byProfile: map[string][]Target{}, done: map[string]int{}}
	var scenarios []string
	for _, t := range targets {
		r.byProfile[t.Profile] = append(r.byProfile[t.Profile], t)
		if !slices.Contains(scenarios, t.Point.Scenario.Name) {
			scenarios = append(scenarios, t.Point.Scenario.Name)
		}
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("upgrade gate: %w", err)
	}
	defer func() {
		if err != nil {
			_ = r.close(context.Background())
		}
	}()
	st := cfg.starter
	if st == nil {
		for i, side := range [2]Side{cfg.Old, cfg.New} {
			sc := cfg.Suite
			sc.Server = append(append([]server.Option{}, cfg.Suite.Server...), side.serverOptions()...)
			traces, err := cfg.traceOptions(i)
			if err != nil {
				return nil, err
			}
			sc.Server = append(sc.Server, traces...)
			sc.SimArgs = append(append([]string{}, cfg.Suite.SimArgs...), side.SimArgs...)
			sc.Profiles, sc.Scenarios = r.profiles, scenarios
			sc.ResultsDir = filepath.Join(cfg.Dir, sideNames[i])
			if r.suites[i], err = suite.New(sc); err != nil {
				return nil, fmt.Errorf("upgrade gate: %w", err)
			}
		}
		st = &suiteStarter{suites: r.suites, simulator: [2]bool{cfg.Old.simulator(), cfg.New.simulator()}}
	}
	units := unitLines(r.suites[oldSide], cfg.Suite)
	for i, name := range []string{OldFile, NewFile} {
		if r.files[i], err = createBenchFile(filepath.Join(cfg.Dir, name), units); err != nil {
			return nil, fmt.Errorf("upgrade gate: %w", err)
		}
	}
	r.pool = &pool{starter: st, capacity: cfg.Servers.capacity(), log: cfg.Log}
	r.parity = newParityRun(cfg.Suite.Thresholds, cfg.Log)
	return r, nil
}

// unitLines are the suite's `Unit X better=…` lines.
func unitLines(s *suite.Suite, cfg suite.Config) []string {
	if s == nil {
		var err error
		if s, err = suite.New(suite.Config{Thresholds: cfg.Thresholds}); err != nil {
			return nil
		}
	}
	return s.UnitLines()
}

// run adds pairs until a comparison decides or the cap is reached: the
// sequential count (package sequential) over pairs, each comparison at
// its share of α, stopping at DIFFERENT or SAME.
func (r *runner) run(ctx context.Context) (*Result, error) {
	res := &Result{OldFile: r.files[oldSide].path, NewFile: r.files[newSide].path}
	sides := &pairSides{ctx: ctx, r: r, res: res}
	if _, err := sequential.Run(r.design(), r.cfg.Suite.Thresholds, sides, nil); err != nil {
		return nil, err
	}
	res.Traces = r.captureTraces(ctx, res.Report)
	return res, nil
}

// design is the gate's sequential count: MinPairs first, MaxPairs the cap,
// Pocock's spending, stopping at SAME.
func (r *runner) design() sequential.Design {
	return sequential.Design{Min: r.cfg.MinPairs, Cap: r.cfg.MaxPairs, Spending: sequential.Pocock, StopOnPass: true}
}

// pairSides are the runner's two sides as package sequential drives them.
type pairSides struct {
	ctx    context.Context
	r      *runner
	res    *Result
	target int
}

// Extend runs pairs of the profiles that hold one of the named benchmarks
// (nil: every profile) until each has runs pairs.
func (p *pairSides) Extend(runs int, only []string) error {
	r := p.r
	if p.target > 0 {
		fmt.Fprintf(r.cfg.Log, "upgrade-gate: undecided: going on to %d pairs (cap %d)\n", runs, r.cfg.MaxPairs)
	}
	p.target = runs
	for _, prof := range r.profiles {
		if only != nil && !holdsProfile(only, prof) {
			continue
		}
		for r.done[prof] < runs {
			if err := r.pair(p.ctx, prof, r.done[prof], runs); err != nil {
				return err
			}
			r.done[prof]++
		}
	}
	return nil
}

// holdsProfile reports whether one of the benchmarks is profile's.
func holdsProfile(benchmarks []string, profile string) bool {
	for _, b := range benchmarks {
		if n, err := benchname.Parse(b); err == nil && n.Profile == profile {
			return true
		}
	}
	return false
}

// Compare gates NEW against OLD at set and records the round.
func (p *pairSides) Compare(set *thresholds.Set) (*gate.Report, error) {
	r, res := p.r, p.res
	rep, err := r.compare(set)
	if err != nil {
		return nil, err
	}
	rd := Round{Pairs: p.target, Decision: rep.Decision(), Summary: rep.Headline(), RunsNeeded: rep.RunsNeeded()}
	res.Rounds = append(res.Rounds, rd)
	res.Report, res.Pairs, res.Starts = rep, p.target, r.pool.starts
	if res.Parity = r.parity.result(); res.Parity != nil {
		res.ParityFailures = res.Parity.Check()
	}
	fmt.Fprintf(r.cfg.Log, "upgrade-gate: %d pairs: %s (%s)\n", p.target, rd.Decision, rd.Summary)
	return rep, nil
}

// nextPairs is the pairs of the next round after an UNKNOWN one at cur
// (sequential.Design.Next).
func nextPairs(runsNeeded, cur, cap int) int {
	return sequential.Design{Cap: cap}.Next(cur, runsNeeded)
}

// order is the sides of pair i in run order: OLD first in even pairs, NEW
// first in odd ones (A B, B A, …).
func order(i int) [2]int {
	if i%2 == 0 {
		return [2]int{oldSide, newSide}
	}
	return [2]int{newSide, oldSide}
}

// pair runs pair i of profile's points: one block per side.
func (r *runner) pair(ctx context.Context, profile string, i, of int) error {
	for _, side := range order(i) {
		s, err := r.pool.get(ctx, side, profile)
		if err != nil {
			return err
		}
		if err := r.parity.collect(ctx, side, profile, s, r.byProfile[profile]); err != nil {
			return err
		}
		for _, t := range r.byProfile[profile] {
			if err := ctx.Err(); err != nil {
				return err
			}
			start := time.Now()
			run, err := s.run(ctx, t.Point)
			if err != nil {
				return fmt.Errorf("pair %d, %s, %s: %w", i+1, strings.ToUpper(sideNames[side]), t.Name, err)
			}
			if err := r.files[side].add(s.configLines(), run.Name, run.Metrics); err != nil {
				return err
			}
			fmt.Fprintf(r.cfg.Log, "upgrade-gate: pair %d/%d %-3s %s (%s)\n", i+1, of, strings.ToUpper(sideNames[side]), run.Name, time.Since(start).Round(time.Millisecond))
			for _, f := range run.Failures() {
				fmt.Fprintf(r.cfg.Log, "upgrade-gate:   check: %s\n", f)
			}
		}
	}
	return nil
}

// compare reads both bench files back and gates NEW against OLD at set
// (a look's share of thresholds.yaml's α).
func (r *runner) compare(set *thresholds.Set) (*gate.Report, error) {
	old, err := input.ReadFile(r.files[oldSide].path)
	if err != nil {
		return nil, err
	}
	nw, err := input.ReadFile(r.files[newSide].path)
	if err != nil {
		return nil, err
	}
	return gate.Compare(old, nw, set, gate.Options{ConfigKeys: ConfigKeys, OwnStarts: true, Interleaved: true})
}

// close stops the servers and closes the files and the sides' results
// folders.
func (r *runner) close(ctx context.Context) error {
	var errs []error
	if r.pool != nil {
		errs = append(errs, r.pool.closeAll(ctx))
	}
	for _, f := range r.files {
		if f != nil {
			errs = append(errs, f.close())
		}
	}
	for _, s := range r.suites {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	return errors.Join(errs...)
}

// SummaryIntro heads the job summary's markdown report: the images, the
// decision, the pairs, the rounds and the server starts.
func (r *Result) SummaryIntro(old, next string) string {
	s := fmt.Sprintf("## Upgrade gate `%s` → `%s`: %s\n\n%d pairs interleaved (%s), %d server starts.\n\n",
		mdInline(old), mdInline(next), r.Decision(), r.Pairs, roundsWords(r), r.Starts)
	if line := r.ParityLine(); line != "" {
		s += "Output " + line + "\n\n"
	}
	return s
}

// roundsWords describes the adaptive rounds: "compared at 6, 9 and 14".
func roundsWords(res *Result) string {
	var at []string
	for _, rd := range res.Rounds {
		at = append(at, fmt.Sprint(rd.Pairs))
	}
	if len(at) == 1 {
		return "compared once"
	}
	return "compared at " + strings.Join(at[:len(at)-1], ", ") + " and " + at[len(at)-1]
}

func mdInline(s string) string { return strings.ReplaceAll(s, "`", "'") }
