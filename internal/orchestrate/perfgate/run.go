package perfgate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/gate/render"
	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/results/report"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// Options configure Run; OptionsFromEnv reads them as the Makefile and
// the workflow set them.
type Options struct {
	// Results is the results folder (bench.txt, gate.json, reports).
	Results string
	// Count is go test's -count (VLLMPERF_COUNT); Budget, when set, picks it
	// from the history instead (VLLMPERF_BUDGET, a Go duration).
	Count  int
	Budget time.Duration
	Store  Store
	// Baseline, when set, is a stored file to gate against instead of the
	// key's (VLLMPERF_BASELINE: baselines/gpu.txt, make baseline-gpu);
	// it must exist, and nothing is recorded.
	Baseline string
	// Refresh replaces the key's baseline with this run when it passes
	// (or the baseline is provisional): a push to main, a schedule.
	Refresh bool
	// AllowInconclusive passes an INCONCLUSIVE verdict (exit 3 → 0).
	AllowInconclusive bool
	// Change says whether this change needs a measurement at all.
	Change Change
	// Sequential, when set (VLLMPERF_SEQUENTIAL), gates a run that has a
	// baseline with a sequential count up to Count (seqcount.go).
	Sequential string
	// Starts (VLLMPERF_STARTS, default 1) runs the suite as that many go
	// test processes of Count/Starts runs each: every profile's runs on
	// that many server starts, which the gate counts (docs/gate.md, "More
	// starts a side"). The server starts as often as with one process.
	Starts int
	// Event is GITHUB_EVENT_NAME ("" outside Actions); StepSummary is
	// $GITHUB_STEP_SUMMARY; Annotate writes ::notice:: lines.
	Event, StepSummary string
	Annotate           bool
	// Timeout bounds go test.
	Timeout time.Duration
	// Go is the go command; Dir the module root go test runs in.
	Go, Dir        string
	Stdout, Stderr io.Writer
}

// OptionsFromEnv applies VLLMPERF_GATE's preset, then reads
// VLLMPERF_COUNT, VLLMPERF_GATE_RESULTS, VLLMPERF_BUDGET,
// VLLMPERF_BASELINE, VLLMPERF_BASELINE_STORE, VLLMPERF_BASELINE_REFRESH,
// VLLMPERF_ALLOW_INCONCLUSIVE, VLLMPERF_GATE_BASE and VLLMPERF_GATE_LABELS
// (package envvar declares them, and reads their old names), and GitHub
// Actions' own variables. Every bad value is an error naming its variable.
func OptionsFromEnv(stdout, stderr io.Writer) (Options, error) {
	o := Options{Timeout: 6 * time.Hour, Go: "go", Dir: ".", Stdout: stdout, Stderr: stderr,
		Event: os.Getenv(envGHEvent), StepSummary: os.Getenv(verdict.StepSummaryEnv),
		Annotate: os.Getenv(envGHActions) == "true"}
	var errs []error
	if _, err := applyGatePreset(); err != nil { // VLLMPERF_GATE: prgate.go
		errs = append(errs, err)
	}
	var err error
	if o.Count, err = envvar.Count.Int(1); err != nil {
		errs = append(errs, err)
	}
	if o.Budget, err = envvar.Budget.Duration(); err != nil {
		errs = append(errs, err)
	}
	if o.Results = envvar.GateResults.Get(); o.Results == "" {
		o.Results = filepath.Join("results", time.Now().UTC().Format("20060102T150405Z"))
	}
	if o.Store, err = DefaultStore(); err != nil {
		errs = append(errs, err)
	}
	o.Baseline = envvar.Baseline.Get()
	if o.Refresh, err = envvar.BaselineRefresh.Bool(); err != nil {
		errs = append(errs, err)
	}
	if o.AllowInconclusive, err = envvar.AllowInconclusive.Bool(); err != nil {
		errs = append(errs, err)
	}
	o.Change = Change{Base: envvar.GateBase.Get(), Labels: strings.Split(envvar.GateLabels.Get(), ",")}
	if o.Sequential, err = sequentialFromEnv(); err != nil {
		errs = append(errs, err)
	}
	if o.Starts, err = envvar.Starts.Int(1); err != nil {
		errs = append(errs, err)
	} else if err := o.checkStarts(); err != nil {
		errs = append(errs, err)
	}
	return o, errors.Join(errs...)
}

// Run is `make perf-gate`: plan, run the suite, gate (or record the
// first baseline). It returns the exit status: 0 pass (or baseline
// recorded, or skipped), 1 a regression, a breached limit or a failed
// check, 2 an INVALID run or results that cannot be compared, 3
// inconclusive; err is for a step that could not run at all.
func Run(ctx context.Context, o Options) (int, error) {
	cfg, err := suite.FromEnv(false)
	if err != nil {
		return 2, err
	}
	if skip, why := o.Change.Skip(ctx, o.Dir); skip {
		o.say("notice", why)
		return 0, nil
	} else if why != "" {
		o.say("warning", why)
	}
	key := KeyFromEnv(ctx)
	basePath, meta, hasBase, err := o.baseline(key)
	if err != nil {
		return 2, err
	}
	if !hasBase && isPullRequest(o.Event) {
		return o.noBaseline(key), nil // nobaseline.go: never green, never recorded
	}
	plan, err := o.plan(cfg, key, basePath, hasBase)
	if err != nil {
		return 2, err
	}
	if err := plan.Write(o.Stdout); err != nil {
		return 2, err
	}
	began := time.Now()
	runBench := func(ctx context.Context, count int) (string, int, error) { return o.benchOrSpread(ctx, cfg, count) }
	if o.Sequential != "" && hasBase && envvar.GateStep.Get() == StepAll {
		// The sequential count reruns the undecided points in this
		// process's folder: one go test at a time, GPU sets not spread.
		runBench = o.sequentialBench(cfg, basePath, &cfg.Thresholds)
	}
	bench, benchCode, err := runBench(ctx, plan.Count)
	if ctx.Err() != nil {
		return 1, err // stopped: exit 128+N, nothing gated or recorded
	}
	if err != nil {
		return 2, err
	}
	if envvar.GateStep.Get() == StepSuite {
		return benchCode, nil // a matrix part: the merge-and-gate job gates (spread.go)
	}
	if err := o.Store.SaveLast(key, bench); err != nil {
		fmt.Fprintf(o.Stderr, "perf-gate: warning: keeping this run for the next plan: %v\n", err)
	}
	o.keepPrediction(key, plan.Prediction, time.Since(began), bench)
	if !hasBase {
		code, recorded, err := o.bootstrap(key, bench, benchCode, plan.Count)
		if recorded || err != nil {
			return code, err
		}
		basePath, meta, _, _ = o.Store.Baseline(key) // another run recorded it first: gate against it
	}
	return o.gate(key, cfg, bench, benchCode, basePath, meta, plan.Count)
}

// PlanFromEnv is the plan of the run the environment configures
// (`vllmperf plan`).
func PlanFromEnv(ctx context.Context, o Options) (*Plan, error) {
	cfg, err := suite.FromEnv(false)
	if err != nil {
		return nil, err
	}
	key := KeyFromEnv(ctx)
	basePath, _, hasBase, err := o.baseline(key)
	if err != nil {
		return nil, err
	}
	return o.plan(cfg, key, basePath, hasBase)
}

// baseline is o.Baseline when set (an error when it does not exist),
// else the key's in the store.
func (o Options) baseline(key Key) (string, Meta, bool, error) {
	if o.Baseline == "" {
		return o.Store.Baseline(key)
	}
	if !fileExists(o.Baseline) {
		return "", Meta{}, false, fmt.Errorf("VLLMPERF_BASELINE=%s does not exist: record it on this runner (make baseline-gpu) or unset VLLMPERF_BASELINE to use the baseline stored for the key", o.Baseline)
	}
	return o.Baseline, Meta{}, true, nil
}

// plan plans the run at o.Count, or at what o.Budget allows.
func (o Options) plan(cfg suite.Config, key Key, basePath string, hasBase bool) (*Plan, error) {
	plan, err := NewPlan(cfg, key, o.Count, o.history(key, basePath, hasBase))
	if err != nil {
		return nil, err
	}
	plan.ApplyBudget(o.Budget)
	if err := plan.spreadOverStarts(o.Starts, cfg.Thresholds); err != nil {
		return nil, err
	}
	if plan.Unknown > 0 {
		plan.Prediction = NewPrediction(cfg, key, plan.Count, plan.History)
	}
	plan.Note = o.sequentialNote(plan.Note, hasBase)
	return plan, nil
}

// history is the file the plan estimates from: the key's last run, else
// its baseline.
func (o Options) history(key Key, basePath string, hasBase bool) string {
	if last := o.Store.Path(key, LastFile); fileExists(last) {
		return last
	}
	if hasBase {
		return basePath
	}
	return ""
}

// bench runs the suite (of profiles; nil: every profile) into the
// results folder and returns bench.txt's path and go test's exit status
// (0, or 1 for a failed check): one go test process, or Starts of them,
// the later ones appending to bench.txt and writing their folders inside
// it (startDir).
func (o Options) bench(ctx context.Context, count int, profiles []string) (string, int, error) {
	starts := max(1, o.Starts)
	if count%starts != 0 {
		return "", 0, fmt.Errorf("%s=%d: %s=%d is not a multiple of it (every start runs the same count): make %[3]s a multiple, or %[1]s a divisor", envvar.Starts.Name, starts, envvar.Count.Name, count)
	}
	path, code, err := o.benchWith(ctx, count/starts, "Perf", o.Results, "")
	for i := 2; i <= starts && err == nil; i++ {
		var c int
		_, c, err = o.benchWith(ctx, count/starts, "Perf", filepath.Join(o.Results, startDir(i, profiles)), path)
		code = worst(code, c)
	}
	return path, code, err
}

// startDir is the results folder of the i-th process of a side spread
// over starts: start-I, and the profiles it ran (start-2-basic) when the
// suite ran some only, so that the matrix's parts, a profile each, merge
// without two of them holding one path (vllmperf merge refuses that).
func startDir(i int, profiles []string) string {
	if len(profiles) == 0 || len(profiles) >= len(profile.Names()) {
		return fmt.Sprintf("start-%d", i)
	}
	return fmt.Sprintf("start-%d-%s", i, strings.Join(profiles, "+"))
}

// checkStarts refuses Starts with what runs the suite otherwise: the
// sequential count's later looks and the GPU sets' processes.
func (o Options) checkStarts() error {
	switch {
	case o.Starts < 1:
		return fmt.Errorf("%s=%d: want at least 1", envvar.Starts.Name, o.Starts)
	case o.Starts > 1 && o.Sequential != "":
		return fmt.Errorf("%s=%d with %s: the sequential count runs its own processes; set one of them", envvar.Starts.Name, o.Starts, envvar.Sequential.Name)
	case o.Starts > 1 && os.Getenv(envvar.GPUSets.Name) != "":
		return fmt.Errorf("%s=%d with %s: the GPU sets run a process a profile; set one of them", envvar.Starts.Name, o.Starts, envvar.GPUSets.Name)
	}
	return nil
}

// benchWith runs the benchmarks pattern selects (go test -bench) count
// times with dir as the results folder, into dir's bench.txt, or
// appended to appendTo when set (a sequential count's later runs).
func (o Options) benchWith(ctx context.Context, count int, pattern, dir, appendTo string) (string, int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", 0, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", 0, err
	}
	path := filepath.Join(abs, results.BenchFile)
	flag := os.O_CREATE | os.O_TRUNC | os.O_WRONLY
	if appendTo != "" {
		path, flag = appendTo, os.O_APPEND|os.O_WRONLY
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	args := []string{"test", "-run", "^$", "-bench", pattern, "-benchtime", "1x", "-count", strconv.Itoa(count), "-timeout", o.Timeout.String(), "."}
	redirect := ">"
	if appendTo != "" {
		redirect = ">>"
	}
	fmt.Fprintf(o.Stdout, "perf-gate: %s %s %s %s\n", o.Go, strings.Join(args, " "), redirect, path)
	cmd := exec.CommandContext(ctx, o.Go, args...)
	cmd.Dir = o.Dir
	cmd.Env = append(os.Environ(), suite.EnvResults+"="+abs, server.EnvJob+"="+server.Job())
	cmd.Stdout = io.MultiWriter(f, o.Stdout)
	cmd.Stderr = o.Stderr
	exitstatus.StopChildren(cmd) // a stop reaches the test binary, which removes its containers
	err = cmd.Run()
	exitstatus.KillGroup(cmd)
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		o.removeLeftovers()
		return path, 0, exitstatus.Interrupted(ctx, errors.New("go test -bench Perf stopped; nothing gated"))
	case err == nil:
		return path, 0, nil
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		return path, 1, nil // a benchmark failed: still gated, reported, uploaded
	default:
		return path, 0, fmt.Errorf("go test -bench Perf: %w", err)
	}
}

// removeLeftovers removes what a stopped suite could not (a test binary
// killed after ChildGrace): containers whose owner is gone. A line names
// each.
func (o Options) removeLeftovers() {
	ctx, cancel := context.WithTimeout(context.Background(), exitstatus.CleanupTimeout)
	defer cancel()
	if server.DockerAvailable(ctx) != nil {
		return // no engine: no container to remove
	}
	logf := func(format string, args ...any) { fmt.Fprintf(o.Stderr, "perf-gate: "+format+"\n", args...) }
	if _, err := server.ReapLeftovers(ctx, logf); err != nil {
		logf("leftover containers: %v", err)
	}
}

// bootstrap records the run as the key's first baseline when it passed
// its checks (a pull request never gets here: noBaseline). recorded
// false with no error: another run was first.
func (o Options) bootstrap(key Key, bench string, benchCode, count int) (code int, recorded bool, err error) {
	if benchCode != 0 {
		o.say("error", fmt.Sprintf("no baseline for %s, and this run failed its checks: not recorded as one (see the --- FAIL: lines above)", key))
		return 1, true, nil
	}
	m := Meta{Key: key, RecordedAt: time.Now().UTC(), Commit: os.Getenv(envGHSHA), Event: o.Event, Count: count}
	switch err := o.Store.Record(key, bench, m, false); {
	case errors.Is(err, ErrRecorded):
		fmt.Fprintf(o.Stdout, "perf-gate: %v: gating against it\n", err)
		return 0, false, nil
	case err != nil:
		return 2, true, fmt.Errorf("record the baseline: %w", err)
	}
	o.say("notice", fmt.Sprintf("no baseline for this key yet: this run (%d runs a point) is recorded as the baseline at %s and passes; the next run is gated against it. Key: %s", count, o.Store.Path(key, BaselineFile), key))
	if _, err := report.WriteFolder(o.Results); err != nil {
		return 2, true, err
	}
	return 0, true, nil
}

// gate compares the run with the key's baseline, writes gate.json, the
// summary, the step summary and the reports, and refreshes the baseline
// when asked.
func (o Options) gate(key Key, cfg suite.Config, bench string, benchCode int, basePath string, meta Meta, count int) (int, error) {
	base, err := input.ReadFile(basePath)
	if err != nil {
		return 2, err
	}
	next, err := input.ReadFile(bench)
	if err != nil {
		return max(benchCode, 2), err // no benchmark line at all: every one failed
	}
	rep, err := gate.Compare(base, next, cfg.Thresholds, gate.Options{})
	if err != nil {
		return 2, fmt.Errorf("%w\n(the key %s matched, yet the files differ: record a new baseline by removing %s)", err, key, basePath)
	}
	if err := render.Of(rep).WriteFile(filepath.Join(o.Results, report.GateFile), "json"); err != nil {
		return 2, err
	}
	out := verdict.Output{Format: "summary", StepSummary: o.StepSummary}
	if err := out.Publish(render.Of(rep), o.Stdout, o.Stderr, "perf-gate", ""); err != nil {
		return 2, err
	}
	if _, err := report.WriteFolder(o.Results); err != nil {
		return 2, err
	}
	code := worst(benchCode, rep.Outcome().ExitCode())
	if code == 3 && o.AllowInconclusive {
		o.say("warning", "INCONCLUSIVE passes ("+envvar.AllowInconclusive.Name+"=true): "+rep.InconclusiveReason())
		code = 0
	}
	if o.Refresh && o.Baseline == "" && benchCode == 0 && refreshes(code, meta) {
		m := Meta{Key: key, RecordedAt: time.Now().UTC(), Commit: os.Getenv(envGHSHA), Event: o.Event, Count: count}
		if err := o.Store.Record(key, bench, m, true); err != nil {
			return code, fmt.Errorf("refresh the baseline: %w", err)
		}
		o.say("notice", "baseline refreshed with this run: "+o.Store.Path(key, BaselineFile))
	}
	return code, nil
}

// refreshes says whether a run whose gate exited code replaces the
// baseline described by meta: a PASS does; a FAIL or an INVALID run
// never does; an INCONCLUSIVE one only a provisional baseline (one a pull
// request recorded before pull requests stopped recording).
func refreshes(code int, meta Meta) bool {
	return code == exitstatus.OK || (code == exitstatus.Undecided && meta.Provisional)
}

// worst is the more severe of two exit statuses: 1 (fail) over 2
// (invalid) over 3 (inconclusive) over 0.
func worst(a, b int) int {
	rank := map[int]int{0: 0, 3: 1, 2: 2, 1: 3}
	if rank[a] >= rank[b] {
		return a
	}
	return b
}

// say prints one line, as a GitHub annotation too in Actions, and adds
// it to the step summary.
func (o Options) say(level, msg string) {
	fmt.Fprintf(o.Stdout, "perf-gate: %s\n", msg)
	if o.Annotate {
		fmt.Fprintf(o.Stdout, "::%s title=perf gate::%s\n", level, strings.ReplaceAll(msg, "\n", " "))
	}
	if o.StepSummary != "" {
		if f, err := os.OpenFile(o.StepSummary, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintf(f, "**perf gate**: %s\n\n", msg)
			f.Close()
		}
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
