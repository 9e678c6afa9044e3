package suite

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/fixtures"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/gate/runnerctl"
	"github.com/vllmperf/vllmperf/internal/orchestrate/capacity"
	"github.com/vllmperf/vllmperf/internal/orchestrate/knee"
	"github.com/vllmperf/vllmperf/internal/orchestrate/record"
	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/request/workload"
	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/run/check"
	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/run/result"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/internal/vocab/cliarg"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// Suite runs scenarios on profiles and collects the results folder.
type Suite struct {
	cfg    Config
	out    *results.Writer
	closed bool
}

// New opens the suite (and its results folder when configured: the
// suites of one process share it, folder.go).
func New(cfg Config) (*Suite, error) {
	s := &Suite{cfg: cfg}
	if cfg.Thresholds == nil {
		s.cfg.Thresholds = thresholds.Empty()
	}
	if cfg.ResultsDir != "" {
		w, err := openFolder(cfg.ResultsDir)
		if err != nil {
			return nil, err
		}
		s.out = w
	}
	if err := s.setupTraces(); err != nil {
		return nil, err
	}
	return s, nil
}

// Config returns the suite's configuration.
func (s *Suite) Config() Config { return s.cfg }

// Close writes the results folder's summary, then (when no other suite
// of the process still writes the folder) its report.html and report.md
// (package report; `vllmperf report DIR` re-renders them). A second Close
// does nothing.
func (s *Suite) Close() error {
	if s.out == nil || s.closed {
		return nil
	}
	s.closed = true
	return closeFolder(s.out)
}

// Session is one profile's server, started by Start.
type Session struct {
	suite   *Suite
	Profile profile.Profile
	Server  server.Server
	// Startup is the run of the first request after the start; its TTFT
	// is the cold TTFT.
	Startup *Run
	// ConfigLines are the benchfmt file-level configuration of the
	// session, in order: backend, gpu, model, vllm-version, image, …, and
	// last the start's own line (StartLines).
	ConfigLines [][2]string
	// StartID names this start of the server, a new one at every start
	// the suite makes ("" for a deployment it did not start): the gate
	// counts a side's server starts by it (gate.ServerStartKey).
	StartID   string
	scenarios map[string]*scenario.Scenario
	gpu       gpuWatch
}

// Run is one point's run with its checks and metrics.
type Run struct {
	// Name is profile=P/scenario=S/POINT.
	Name    string
	Result  *result.Result
	Checks  []check.Result
	Metrics map[string]float64
	// Strict says whether NOT_AVAILABLE checks fail (thresholds).
	Strict bool
}

// Failures are the checks that fail the run.
func (r *Run) Failures() []check.Result { return check.Failures(r.Checks, r.Strict) }

// Start starts the named profile's server and sends its first request
// (the cold start).
func (s *Suite) Start(ctx context.Context, name string) (*Session, error) {
	if s.External() {
		return s.StartProfile(ctx, profile.Deployment(name))
	}
	p, err := profile.Resolve(name)
	if err != nil {
		return nil, err
	}
	return s.StartProfile(ctx, p)
}

// External reports whether the suite measures a deployment it did not
// start (the external backend): one subject, with its own flags.
func (s *Suite) External() bool { return s.cfg.Backend == server.KindExternal }

// StartsServers reports whether the suite starts its servers with the
// profiles' flags (every backend but external), so that tests comparing
// profiles or turning a flag off can run.
func (s *Suite) StartsServers() bool { return s.cfg.StartsServers() }

// Shares reports whether the suite's servers share something timed: the
// GPUs of this machine (container backend) or one deployment (external).
// Their profiles then run one after another; in-process simulators share
// nothing but the CPU.
func (s *Suite) Shares() bool { return s.cfg.Backend != server.KindSim }

// StartProfile is Start for a profile already loaded (a variant made in
// code, e.g. with prefix caching turned off).
func (s *Suite) StartProfile(ctx context.Context, p profile.Profile) (*Session, error) {
	if s.External() && !p.Deployment {
		return nil, fmt.Errorf("profile %s: the external backend cannot apply a profile's flags (the deployment runs with its own): measure it as one deployment (Suite.Start with its label)", p.Name)
	}
	p = p.WithSimArgs(s.cfg.SimArgs...)
	if !simSeedSet(p.SimArgs()) {
		// A simulator draws its noise from --sim-seed: every start with
		// the same seed would replay the same noise, so a baseline and a
		// new run (or two -count repetitions) would agree more than two
		// real servers ever do. Each start gets its own, unless one is set.
		p = p.WithSimArgs(cliarg.SimSeed.With(strconv.FormatUint(rand.Uint64()>>1, 10))...)
	}
	opts := append(append([]server.Option{}, s.cfg.Server...), server.WithAPIKey(s.cfg.APIKey))
	before := s.gpuProcesses(ctx)
	srv, err := server.Run(ctx, p, opts...)
	if err != nil {
		return nil, err
	}
	ss := &Session{suite: s, Profile: p, Server: srv, scenarios: map[string]*scenario.Scenario{}}
	if !p.Deployment {
		ss.StartID = fmt.Sprintf("%016x", rand.Uint64())
	}
	ss.gpu = s.watch(ctx, srv.Describe(), before)
	ss.Startup, err = ss.run(ctx, startupPoint(), benchname.StartupScenario)
	if err != nil {
		_ = srv.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("profile %s: first request: %w", p.Name, err)
	}
	ss.addStartupMetrics()
	ss.ConfigLines = s.configLines(ctx, ss)
	if s.out != nil {
		m := map[string]string{}
		for _, kv := range ss.ConfigLines {
			m[kv[0]] = kv[1]
		}
		if !p.Deployment {
			m[results.ConfigGPUs] = strconv.Itoa(gpus(p))
		}
		s.out.SetConfig(p.Name, m)
		record.Add(s.out, ss.Startup.Name, p.Name, ss.Startup.Result, ss.Startup.Metrics, ss.Startup.Checks)
	}
	return ss, nil
}

// Close stops the session's server.
func (ss *Session) Close(ctx context.Context) error { return ss.Server.Close(ctx) }

// Scenario returns a built-in scenario, parsed once per session.
func (ss *Session) Scenario(name string) (*scenario.Scenario, error) {
	if sc, ok := ss.scenarios[name]; ok {
		return sc, nil
	}
	sc, err := scenario.Builtin(name)
	if err != nil {
		return nil, err
	}
	ss.scenarios[name] = sc
	return sc, nil
}

// Points returns the scenario's points at the suite's size.
func (ss *Session) Points(name string) ([]scenario.Point, error) {
	sc, err := ss.Scenario(name)
	if err != nil {
		return nil, err
	}
	return sc.Points(ss.suite.cfg.Size), nil
}

// Run runs one point and checks it.
func (ss *Session) Run(ctx context.Context, p scenario.Point) (*Run, error) {
	r, err := ss.run(ctx, p, p.Scenario.Name)
	if err != nil {
		return nil, err
	}
	if out := ss.suite.out; out != nil {
		record.Add(out, r.Name, ss.Profile.Name, r.Result, r.Metrics, r.Checks)
	}
	return r, nil
}

func (ss *Session) run(ctx context.Context, p scenario.Point, scenarioName string) (*Run, error) {
	scope := ss.suite.cfg.Thresholds.Scope(ss.Profile.Name, scenarioName)
	opts := []pipeline.Option{
		pipeline.WithAPIKey(ss.suite.cfg.APIKey),
		pipeline.WithDrainTimeout(scope.Checks.DrainTimeout),
		pipeline.WithGoodput(stats.SLO{TTFT: scope.Goodput.TTFT, TPOT: scope.Goodput.TPOT, E2EL: scope.Goodput.E2EL}),
	}
	opts = append(opts, ss.traceOptions(p, scenarioName)...)
	rec := ss.gpu.start(ctx)
	ctl := runnerctl.Start(ctx, runnerctl.Settings{}) // the runner's speed, recorded with the run
	res, err := pipeline.Run(ctx, ss.Server, p, opts...)
	runner := ctl.Stop()
	tel := ss.gpu.stop(rec)
	if err != nil {
		return nil, err
	}
	name := benchname.Name{Profile: ss.Profile.Name, Scenario: scenarioName, Point: p.Key}.String()
	// A family that lacks canonical metrics (Metrics.Missing: SGLang's) runs
	// with strict off: its NOT_AVAILABLE checks are expected, not failures.
	strict := scope.Checks.Strict && server.FamilyOf(ss.Server).ExposesAll()
	r := &Run{Name: name, Result: res, Metrics: res.Metrics(), Strict: strict}
	maps.Copy(r.Metrics, tel.Metrics(res.Summary.TotalOutputTokens))
	maps.Copy(r.Metrics, runner.Metrics())
	r.Checks = append(check.All(res, scope, ss.facts()), check.GPU(tel, ss.gpu.required)...)
	return r, nil
}

// facts are what the profile says about the server: nothing for a
// deployment the suite did not start. The batch cap is the flag the
// server's family names for it (vLLM's --max-num-seqs).
func (ss *Session) facts() check.Facts {
	f := check.Facts{Started: !ss.Profile.Deployment}
	capFlag := server.FamilyOf(ss.Server).Flags.BatchCap
	if capFlag == "" || !f.Started {
		return f
	}
	if v, ok := ss.Profile.Flag(capFlag); ok {
		f.MaxNumSeqs, _ = strconv.Atoi(v)
	}
	return f
}

// gpus is how many GPUs a profile's server uses: its tensor, pipeline
// and data parallel sizes multiplied (vLLM's defaults are 1).
func gpus(p profile.Profile) int {
	n := 1
	for _, flag := range []string{"tensor-parallel-size", "pipeline-parallel-size", "data-parallel-size"} {
		if v, ok := p.Flag(flag); ok {
			if k, err := strconv.Atoi(v); err == nil && k > 0 {
				n *= k
			}
		}
	}
	return n
}

// simSeedSet reports whether args set --sim-seed (read as the simulator
// reads it).
func simSeedSet(args []string) bool {
	_, ok := config.ArgValue(args, "sim-seed")
	return ok
}

// startupPoint sends one short request, the server's first.
func startupPoint() scenario.Point {
	body, err := fixtures.Prompt("short")
	if err != nil {
		panic(err) // the fixture is embedded: its absence is a build defect
	}
	return scenario.Point{
		Scenario:        &scenario.Scenario{Name: benchname.StartupScenario, Description: "the server's first request after its start"},
		Classes:         []workload.Class{{Name: "cold", Weight: 1, Config: workload.Config{Body: body, MaxTokens: 16, IgnoreEOS: true}}},
		Load:            load.Config{Concurrency: 1, Requests: 1},
		SamplerInterval: scenario.DefaultQuickSamplerInterval,
	}
}

// addStartupMetrics adds ready-ns, cold-ttft-ns and kv-blocks/GiB.
func (ss *Session) addStartupMetrics() {
	m := ss.Startup.Metrics
	m[units.Ready] = float64(ss.Server.ReadyIn())
	if sum := ss.Startup.Result.Summary; sum.ColdTTFTOK {
		m[units.ColdTTFT] = sum.ColdTTFT * float64(time.Millisecond)
	}
	if v, ok := ss.blocksPerGiB(); ok {
		m[units.BlocksPerGiB] = v
	}
}

// blocksPerGiB is num_gpu_blocks (cache_config_info) per GiB of KV cache
// (the server's start-up log, read by its family: Family.KVCacheGiB), when
// both are known.
func (ss *Session) blocksPerGiB() (float64, bool) {
	res := ss.Startup.Result
	if res.After == nil {
		return 0, false
	}
	info, err := res.After.Info(scrape.CacheConfigInfo)
	if err != nil {
		return 0, false
	}
	blocks, err := strconv.ParseFloat(info["num_gpu_blocks"], 64)
	if err != nil || blocks <= 0 {
		return 0, false
	}
	gib, ok := server.FamilyOf(ss.Server).KVCacheGiB(ss.Server.Logs(1000))
	if !ok {
		return 0, false
	}
	return blocks / gib, true
}

// Knee computes a sweep's knee from its runs (one per concurrency) and
// returns it with its units.
func (ss *Session) Knee(scenarioName string, runs []*Run) (knee.Result, map[string]float64) {
	scope := ss.suite.cfg.Thresholds.Scope(ss.Profile.Name, scenarioName)
	var pts []knee.Point
	for _, r := range runs {
		if c := r.Result.Point.Load.Concurrency; c > 0 {
			pts = append(pts, knee.Point{Concurrency: c, Metrics: r.Metrics})
		}
	}
	slo := scope.Knee.SLO
	if len(slo) == 0 {
		slo = scope.SLO
	}
	k := knee.Find(pts, scope.Knee, slo)
	m := map[string]float64{}
	for unit, v := range map[string]int{units.Knee: k.Knee, units.Saturation: k.Saturation, units.SLOConc: k.SLOMax, units.Recommended: k.Recommended} {
		if v > 0 {
			m[unit] = float64(v)
		}
	}
	if out := ss.suite.out; out != nil {
		out.AddKnee(record.Knee(ss.Profile.Name, scenarioName, k))
	}
	return k, m
}

// Capacity runs a capacity scenario's search on the session's server
// (package capacity) and returns it with its units (summary=capacity).
// Each run is recorded in the results folder under its level's point
// (rate=R or conc=N) without checks: runs above the capacity break the
// SLO by design. An error stops the search (the server went down); the
// result so far comes with it.
func (ss *Session) Capacity(ctx context.Context, scenarioName string) (*capacity.Result, map[string]float64, error) {
	sc, err := ss.Scenario(scenarioName)
	if err != nil {
		return nil, nil, err
	}
	cfg, runner, err := capacity.FromScenario(sc, ss.suite.cfg.Size, ss.suite.cfg.Thresholds.Scope(ss.Profile.Name, scenarioName))
	if err != nil {
		return nil, nil, err
	}
	runner.Server = ss.Server
	runner.Options = append(runner.Options, pipeline.WithAPIKey(ss.suite.cfg.APIKey))
	if out := ss.suite.out; out != nil {
		runner.OnRun = func(res *result.Result, _ capacity.Trial) {
			name := benchname.Name{Profile: ss.Profile.Name, Scenario: scenarioName, Point: res.Point.Key}.String()
			record.Add(out, name, ss.Profile.Name, res, res.Metrics(), nil)
		}
	}
	r, err := capacity.Search(ctx, cfg, runner.Probe)
	if r == nil {
		return nil, nil, err
	}
	if out := ss.suite.out; out != nil {
		out.AddCapacity(record.Capacity(ss.Profile.Name, scenarioName, r))
	}
	return r, r.Metrics(), err
}

// configLines describes the session for benchfmt.
func (s *Suite) configLines(ctx context.Context, ss *Session) [][2]string {
	d := ss.Server.Describe()
	return append([][2]string{
		{"backend", string(d.Backend)},
		{"gpu", s.gpuName(ctx, d, ss.Profile)},
		{"model", ss.Server.Model()},
		{"vllm-version", server.Version(ctx, ss.Server)},
		{"image", d.Image},
		{"size", string(s.cfg.Size)},
		{"flags", flagsLine(ss.Profile)},
	}, append(provenanceLines(ctx, d), ss.StartLines()...)...)
}

// StartLines are the configuration line that names this start
// (gate.ServerStartKey), printed again before the points that run on it;
// none for a deployment the suite did not start, whose runs of several
// processes share its one start (the gate then counts one).
func (ss *Session) StartLines() [][2]string {
	if ss.StartID == "" {
		return nil
	}
	return [][2]string{{input.ServerStartKey, ss.StartID}}
}

// flagsLine says whose flags the server runs with: the profile's (the
// suite started it) or the deployment's own (it did not).
func flagsLine(p profile.Profile) string {
	if p.Deployment {
		return "the deployment's own (not started by vllmperf)"
	}
	if len(p.ExtraArgs) > 0 { // a variant made in code
		return "profile " + p.Name + " with " + strings.Join(p.ExtraArgs, " ")
	}
	return "profile " + p.Name
}

// gpuName is VLLMPERF_GPU_NAME, sim:<preset> for the simulator, the local
// GPUs' name from nvidia-smi, or unknown.
func (s *Suite) gpuName(ctx context.Context, d server.Description, p profile.Profile) string {
	if s.cfg.GPUName != "" {
		return s.cfg.GPUName
	}
	if d.Simulator {
		return "sim:" + simGPU(p.SimArgs())
	}
	if d.Backend == server.KindContainer {
		if gpus := server.LocalGPUs(ctx); gpus != "" {
			return gpus
		}
	}
	return "unknown"
}

// simGPU is the --sim-gpu value among args, or the simulator's default.
func simGPU(args []string) string {
	if v, ok := config.ArgValue(args, "sim-gpu"); ok {
		return v
	}
	return presets.DefaultGPU
}

// UnitLines are benchfmt's `Unit NAME better=DIR` lines for every unit
// with a direction (units.DefaultDirection, unless the thresholds
// file says otherwise at its top level), so benchstat and the gate read
// the direction from the file.
func (s *Suite) UnitLines() []string {
	var out []string
	for _, u := range units.Names() {
		d := s.cfg.Thresholds.Better("", "", u)
		if d == units.Unset {
			d = units.DefaultDirection(u)
		}
		if d == units.Lower || d == units.Higher {
			out = append(out, fmt.Sprintf("Unit %s better=%s", u, d))
		}
	}
	return out
}
