package upgrade

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// The settings of TestGateQuality (environment variables), with their
// defaults.
const (
	envQuality   = "VLLMPERF_GATE_QUALITY"      // 1: run the measurement
	envPool      = "VLLMPERF_QUALITY_POOL"      // runs per pool: 30
	envPoint     = "VLLMPERF_QUALITY_POINT"     // the point measured
	envSlowdowns = "VLLMPERF_QUALITY_SLOWDOWNS" // injected slowdowns: 1.05,1.10
	envDecisions = "VLLMPERF_QUALITY_DECISIONS" // gate decisions per cell: 200
	envCount     = "VLLMPERF_QUALITY_COUNT"     // runs a side of a fixed-count gate: 10
	envDir       = "VLLMPERF_QUALITY_DIR"       // keep (and reuse) the pools there (relative: to the module root)
	envSeed      = "VLLMPERF_QUALITY_SEED"      // the resampling's seed: 1
	envTests     = "VLLMPERF_QUALITY_TESTS"     // gate as if Holm covered this many tests: 0 (the point's own)
	defaultPoint = "profile=basic/scenario=concurrency-sweep/conc=8"
)

// qualitySettings are TestGateQuality's settings.
type qualitySettings struct {
	pool, decisions, count int
	// copies is how many times each draw is gated side by side under other
	// names, so that Holm's correction covers as many tests as a whole
	// suite's gate (tests, VLLMPERF_QUALITY_TESTS); 1 is the point alone.
	copies, tests int
	seed          uint64
	point         string
	slowdowns     []float64
	dir           string
	base          suite.Config
}

// TestGateQuality measures how often the gates decide rightly on the
// simulator, by resampling pools of real runs of one point
// (docs/gate.md, "Gate quality"). It is a measurement of some ten minutes,
// run on request:
//
//	VLLMPERF_GATE_QUALITY=1 VLLMPERF_SIM_ARGS="--sim-jitter 0.05" \
//	  go test -run TestGateQuality -v -timeout 60m ./internal/orchestrate/upgrade/
//
// The pools: for the baseline gate (a stored baseline against a later
// run), one block of runs per condition on one server each, one after the
// other (base, A/A, each slowdown); for the interleaved upgrade gate, one
// Run per condition with its defaults (OLD and NEW in pairs, servers
// restarted per block). Every server start gets its own --sim-seed. A
// decision draws runs without replacement from the pools (whole pairs for
// the interleaved gate) and gates them with thresholds.yaml's settings.
// It fails when a target of the issue is missed: A/A false-fail rate ≤ 2%,
// detection of +10% ≥ 90% and of +5% ≥ 80% at count 10.
func TestGateQuality(t *testing.T) {
	if os.Getenv(envQuality) != "1" {
		t.Skipf("a measurement of some ten minutes: set %s=1 to run it (docs/gate.md, Gate quality)", envQuality)
	}
	s := qualityFromEnv(t)
	t.Logf("pools in %s: %d runs each of %s at %s size, sim args %q", s.dir, s.pool, s.point, s.base.Size, strings.Join(s.base.SimArgs, " "))
	pools := collectPools(t, s)
	if s.tests > 0 {
		aa := pools.seq["A/A"]
		m := decide(t, s.base.Thresholds, pools.seq["base"], aa, 1).Comparisons
		s.copies = max(1, int(math.Round(float64(s.tests)/float64(m))))
		t.Logf("each draw gated %d times side by side: Holm over %d tests (%d of the point)", s.copies, s.copies*m, m)
	}

	conds := []string{"A/A"}
	for _, x := range s.slowdowns {
		conds = append(conds, slowLabel(x))
	}
	rng := rand.New(rand.NewPCG(s.seed, 0x9a7e))
	set := s.base.Thresholds
	var cells []qualityCell
	adaptiveCap := min(DefaultMaxPairs, s.pool)
	for _, c := range conds {
		seq, ab := pools.seq[c], pools.ab[c]
		cells = append(cells,
			fixedCell(t, rng, set, "baseline gate", c, pools.seq["base"], seq, false, s),
			fixedCell(t, rng, set, "interleaved", c, ab[oldSide], ab[newSide], true, s),
			adaptiveCell(t, rng, set, c, ab, adaptiveCap, s))
	}
	effects := observedEffects(t, set, pools, conds)
	report := qualityReport(s, cells, effects, pools)
	t.Log("\n" + report)
	if err := os.WriteFile(filepath.Join(s.dir, "quality.md"), []byte(report), 0o644); err != nil {
		t.Error(err)
	}
	for _, c := range cells {
		if miss := c.target(); miss != "" {
			t.Errorf("%s, %s: %s", c.gate, c.cond, miss)
		}
	}
}

func qualityFromEnv(t *testing.T) qualitySettings {
	t.Helper()
	s := qualitySettings{pool: 30, decisions: 200, count: 10, copies: 1, seed: 1, point: defaultPoint, slowdowns: []float64{1.05, 1.10}}
	var err error
	if s.base, err = suite.FromEnv(true); err != nil {
		t.Fatal(err)
	}
	for env, p := range map[string]*int{envPool: &s.pool, envDecisions: &s.decisions, envCount: &s.count} {
		if v := os.Getenv(env); v != "" {
			if *p, err = strconv.Atoi(v); err != nil || *p < 1 {
				t.Fatalf("%s=%q: want a positive whole number", env, v)
			}
		}
	}
	if v := os.Getenv(envSeed); v != "" {
		if s.seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("%s=%q: want a whole number", envSeed, v)
		}
	}
	if v := os.Getenv(envPoint); v != "" {
		s.point = v
	}
	if v := os.Getenv(envSlowdowns); v != "" {
		s.slowdowns = nil
		for _, f := range strings.Split(v, ",") {
			x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || x <= 1 {
				t.Fatalf("%s=%q: want slowdown factors above 1, e.g. 1.05,1.10", envSlowdowns, v)
			}
			s.slowdowns = append(s.slowdowns, x)
		}
	}
	if v := os.Getenv(envTests); v != "" {
		if s.tests, err = strconv.Atoi(v); err != nil || s.tests < 0 {
			t.Fatalf("%s=%q: want the number of tests Holm's correction should cover, e.g. 900", envTests, v)
		}
	}
	if s.count > s.pool {
		t.Fatalf("%s=%d is more than the pool's %d runs", envCount, s.count, s.pool)
	}
	switch s.dir = os.Getenv(envDir); {
	case s.dir == "":
		s.dir = t.TempDir()
	case !filepath.IsAbs(s.dir): // relative to the module root, not to this package
		s.dir = filepath.Join("..", "..", "..", s.dir)
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return s
}

func slowLabel(x float64) string { return fmt.Sprintf("+%g%%", math.Round((x-1)*1000)/10) }

// pools holds the runs: seq by condition ("base", "A/A", "+5%", …) and
// ab by condition, OLD and NEW in pair order.
type pools struct {
	seq map[string]*input.Input
	ab  map[string][2]*input.Input
}

// collectPools reads the pools from the folder, running those missing.
func collectPools(t *testing.T, s qualitySettings) pools {
	t.Helper()
	targets, err := SelectPoints(Builtin(), s.base.Size, []string{s.point})
	if err != nil || len(targets) != 1 {
		t.Fatalf("%s=%q must name one point: %v (%d points)", envPoint, s.point, err, len(targets))
	}
	tg := targets[0]
	p := pools{seq: map[string]*input.Input{}, ab: map[string][2]*input.Input{}}
	seed := 1
	slow := map[string][]string{"A/A": nil}
	for _, x := range s.slowdowns {
		slow[slowLabel(x)] = []string{"--sim-slowdown", strconv.FormatFloat(x, 'f', -1, 64)}
	}
	conds := append([]string{"base"}, sortedConds(slow)...)
	for _, c := range conds {
		file := filepath.Join(s.dir, "seq-"+fileLabel(c)+".txt")
		if !exists(file) {
			t.Logf("baseline-gate pool %s: %d runs", c, s.pool)
			seqPool(t, s, tg, file, append(seedFlag(seed), slow[c]...))
		}
		seed++
		p.seq[c] = readPool(t, file, s.pool)
	}
	for _, c := range sortedConds(slow) {
		dir := filepath.Join(s.dir, "ab-"+fileLabel(c))
		if !exists(filepath.Join(dir, NewFile)) {
			t.Logf("interleaved pool %s: %d pairs", c, s.pool)
			os.RemoveAll(dir)                           // an interrupted pool
			_, err := Run(context.Background(), Config{ // each server start gets its own --sim-seed
				Suite:    s.base,
				Old:      Side{Image: InProcess},
				New:      Side{Image: InProcess, SimArgs: slow[c]},
				Points:   []string{s.point},
				MinPairs: s.pool, MaxPairs: s.pool,
				Dir: dir,
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		p.ab[c] = [2]*input.Input{readPool(t, filepath.Join(dir, OldFile), s.pool), readPool(t, filepath.Join(dir, NewFile), s.pool)}
	}
	return p
}

// sortedConds orders A/A first, then the slowdowns.
func sortedConds(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for c := range m {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b string) int {
		if a == "A/A" || b == "A/A" {
			return map[bool]int{true: -1, false: 1}[a == "A/A"]
		}
		fa, _ := strconv.ParseFloat(strings.Trim(a, "+%"), 64)
		fb, _ := strconv.ParseFloat(strings.Trim(b, "+%"), 64)
		return int(math.Copysign(1, fa-fb))
	})
	return out
}

func fileLabel(c string) string {
	return strings.NewReplacer("/", "", "+", "slow", "%", "pct").Replace(strings.ToLower(c))
}

func seedFlag(seed int) []string { return []string{"--sim-seed", strconv.Itoa(seed)} }

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// seqPool runs the point n times on one server started with simArgs, as a
// block, into file.
func seqPool(t *testing.T, s qualitySettings, tg Target, file string, simArgs []string) {
	t.Helper()
	ctx := context.Background()
	cfg := s.base
	cfg.SimArgs = append(append([]string{}, cfg.SimArgs...), simArgs...)
	cfg.Profiles, cfg.Scenarios, cfg.ResultsDir = []string{tg.Profile}, []string{tg.Point.Scenario.Name}, ""
	su, err := suite.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := su.Start(ctx, tg.Profile)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close(ctx)
	tmp := file + ".tmp"
	bf, err := createBenchFile(tmp, su.UnitLines())
	if err != nil {
		t.Fatal(err)
	}
	for range s.pool {
		r, err := ss.Run(ctx, tg.Point)
		if err != nil {
			t.Fatal(err)
		}
		if err := bf.add(ss.ConfigLines, r.Name, r.Metrics); err != nil {
			t.Fatal(err)
		}
	}
	if err := bf.close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
}

// readPool reads a pool of one benchmark with at least n runs and keeps
// the first n.
func readPool(t *testing.T, file string, n int) *input.Input {
	t.Helper()
	in, err := input.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, r := range in.Results {
		names[string(r.Name)] = true
	}
	if len(names) != 1 || len(in.Results) < n {
		t.Fatalf("%s: %d runs of %d benchmarks, want %d runs of one: remove it to measure it again", file, len(in.Results), len(names), n)
	}
	in.Results = in.Results[:n]
	return in
}

// pick is the input with only the runs at idx.
func pick(in *input.Input, idx []int) *input.Input {
	out := &input.Input{Name: in.Name, Units: in.Units, Results: make([]*benchfmt.Result, len(idx))}
	for i, j := range idx {
		out.Results[i] = in.Results[j]
	}
	return out
}

func decide(t *testing.T, set *thresholds.Set, base, next *input.Input, copies int) *gate.Report {
	t.Helper()
	rep, err := gate.Compare(replicate(base, copies), replicate(next, copies), set, gate.Options{ConfigKeys: ConfigKeys, OwnStarts: true})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// replicate repeats the input's runs under n names (a /copy=i element
// before the -N suffix), so that Holm's correction covers n times the
// point's tests, all with the same p-values: a whole suite's gate as seen
// by one point (the strictest case of Holm, where it is Bonferroni's).
func replicate(in *input.Input, n int) *input.Input {
	if n <= 1 {
		return in
	}
	out := &input.Input{Name: in.Name, Units: in.Units}
	for i := range n {
		for _, r := range in.Results {
			c := r.Clone()
			name := string(c.Name)
			suffix := procsSuffix.FindString(name)
			c.Name = benchfmt.Name(fmt.Sprintf("%s/copy=%d%s", strings.TrimSuffix(name, suffix), i, suffix))
			out.Results = append(out.Results, c)
		}
	}
	return out
}

var procsSuffix = regexp.MustCompile(`-[0-9]+$`)

// qualityCell counts one gate's decisions on one condition.
type qualityCell struct {
	gate, cond                  string
	n, different, same, unknown int
	pairs                       int // adaptive: pairs used, summed
}

func (c *qualityCell) add(d gate.Decision) {
	c.n++
	switch d {
	case gate.Different:
		c.different++
	case gate.Same:
		c.same++
	default:
		c.unknown++
	}
}

func pct(k, n int) float64 { return 100 * float64(k) / float64(n) }

// target is the target the cell misses ("" when met or none).
func (c *qualityCell) target() string {
	rate := pct(c.different, c.n)
	switch {
	case c.cond == "A/A" && rate > 2:
		return fmt.Sprintf("false-fail rate %.1f%% (%d of %d), target ≤ 2%%", rate, c.different, c.n)
	case c.cond == "+10%" && rate < 90:
		return fmt.Sprintf("detection %.1f%% (%d of %d), target ≥ 90%%", rate, c.different, c.n)
	case c.cond == "+5%" && rate < 80:
		return fmt.Sprintf("detection %.1f%% (%d of %d), target ≥ 80%%", rate, c.different, c.n)
	}
	return ""
}

// fixedCell draws decisions at count runs a side: independent draws from
// two pools, or (paired) the same pair indexes from OLD and NEW.
func fixedCell(t *testing.T, rng *rand.Rand, set *thresholds.Set, name, cond string, base, next *input.Input, paired bool, s qualitySettings) qualityCell {
	c := qualityCell{gate: fmt.Sprintf("%s, %d runs a side", name, s.count), cond: cond}
	for range s.decisions {
		bi := rng.Perm(len(base.Results))[:s.count]
		ni := bi
		if !paired {
			ni = rng.Perm(len(next.Results))[:s.count]
		}
		c.add(decide(t, set, pick(base, bi), pick(next, ni), s.copies).Decision())
	}
	return c
}

// adaptiveCell runs the upgrade gate's loop on drawn pairs: MinPairs
// first, then nextPairs while UNKNOWN, up to cap.
func adaptiveCell(t *testing.T, rng *rand.Rand, set *thresholds.Set, cond string, ab [2]*input.Input, cap int, s qualitySettings) qualityCell {
	c := qualityCell{gate: fmt.Sprintf("interleaved, adaptive %d→%d pairs", min(DefaultMinPairs, cap), cap), cond: cond}
	for range s.decisions {
		order := rng.Perm(len(ab[oldSide].Results))
		n := min(DefaultMinPairs, cap)
		for {
			rep := decide(t, set, pick(ab[oldSide], order[:n]), pick(ab[newSide], order[:n]), s.copies)
			if d := rep.Decision(); d != gate.Unknown || n >= cap {
				c.add(d)
				c.pairs += n
				break
			}
			n = nextPairs(rep.RunsNeeded(), n, cap)
		}
	}
	return c
}

// effect is the change a condition made in one unit over its whole pool.
type effect struct {
	cond, unit string
	seq, ab    float64 // Δ% of the medians
}

// The units whose change and spread the report shows.
var shownUnits = []string{"tpot-p50-ns", "ttft-p50-ns", "e2el-p99-ns", "tok/s"}

func observedEffects(t *testing.T, set *thresholds.Set, p pools, conds []string) []effect {
	var out []effect
	for _, c := range conds {
		seq := decide(t, set, p.seq["base"], p.seq[c], 1)
		ab := decide(t, set, p.ab[c][oldSide], p.ab[c][newSide], 1)
		for _, u := range shownUnits {
			out = append(out, effect{cond: c, unit: u, seq: rowDelta(seq, u), ab: rowDelta(ab, u)})
		}
	}
	return out
}

func rowDelta(rep *gate.Report, unit string) float64 {
	for _, r := range rep.Rows {
		if r.Unit == unit {
			return r.DeltaPct
		}
	}
	return math.NaN()
}

// spread is a pool's run-to-run coefficient of variation of unit, percent.
func spread(in *input.Input, unit string) float64 {
	var vs []float64
	for _, r := range in.Results {
		for _, v := range r.Values {
			if u, x := input.AsWritten(v); u == unit {
				vs = append(vs, x)
			}
		}
	}
	if len(vs) < 2 {
		return math.NaN()
	}
	var sum, sq float64
	for _, v := range vs {
		sum += v
	}
	mean := sum / float64(len(vs))
	for _, v := range vs {
		sq += (v - mean) * (v - mean)
	}
	return 100 * math.Sqrt(sq/float64(len(vs)-1)) / mean
}

func qualityReport(s qualitySettings, cells []qualityCell, effects []effect, p pools) string {
	var b strings.Builder
	g := s.base.Thresholds.Gate("", "", "")
	fmt.Fprintf(&b, "Gate quality on %s (%s size), %s; sim args %q; %s\n", s.point, s.base.Size, time.Now().UTC().Format("2006-01-02"), strings.Join(s.base.SimArgs, " "), thresholdsName(s.base.Thresholds))
	fmt.Fprintf(&b, "gate settings: α %g, min_effect %g%%, min_samples %d, %g%% intervals; pools of %d runs (baseline gate: one block per condition; interleaved: %d pairs per condition); %d decisions per row, runs drawn without replacement (seed %d)\n",
		g.Alpha, 100*g.MinEffect, g.MinSamples, 100*g.Confidence, s.pool, s.pool, s.decisions, s.seed)
	if s.copies > 1 {
		fmt.Fprintf(&b, "each draw gated as %d copies side by side, so that Holm's correction covers %d× the point's tests (VLLMPERF_QUALITY_TESTS=%d: a whole suite's gate)\n", s.copies, s.copies, s.tests)
	}
	b.WriteString("\n")
	b.WriteString("| gate | true change | DIFFERENT (fails) | SAME | UNKNOWN | mean pairs |\n|---|---|--:|--:|--:|--:|\n")
	for _, c := range cells {
		mean := "—"
		if c.pairs > 0 {
			mean = fmt.Sprintf("%.1f", float64(c.pairs)/float64(c.n))
		}
		fmt.Fprintf(&b, "| %s | %s | %.1f%% | %.1f%% | %.1f%% | %s |\n", c.gate, c.cond, pct(c.different, c.n), pct(c.same, c.n), pct(c.unknown, c.n), mean)
	}
	b.WriteString("\nObserved change of the medians over the whole pools (baseline gate / interleaved):\n\n| true change | " + strings.Join(shownUnits, " | ") + " |\n|---|" + strings.Repeat("--:|", len(shownUnits)) + "\n")
	for i := 0; i < len(effects); i += len(shownUnits) {
		fmt.Fprintf(&b, "| %s |", effects[i].cond)
		for _, e := range effects[i : i+len(shownUnits)] {
			fmt.Fprintf(&b, " %+.2f%% / %+.2f%% |", e.seq, e.ab)
		}
		b.WriteString("\n")
	}
	b.WriteString("\nRun-to-run spread (coefficient of variation) in the pools:\n\n| pool | " + strings.Join(shownUnits, " | ") + " |\n|---|" + strings.Repeat("--:|", len(shownUnits)) + "\n")
	names := []string{"base"}
	for c := range p.seq {
		if c != "base" {
			names = append(names, c)
		}
	}
	slices.Sort(names[1:])
	for _, c := range names {
		fmt.Fprintf(&b, "| sequential %s |", c)
		for _, u := range shownUnits {
			fmt.Fprintf(&b, " %.2f%% |", spread(p.seq[c], u))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func thresholdsName(set *thresholds.Set) string {
	if set == nil || set.Source == "" {
		return "built-in gate settings"
	}
	return "settings from " + set.Source
}

// TestQualityHelpers checks the resampling's parts on a small pool.
func TestQualityHelpers(t *testing.T) {
	t.Parallel()
	in, err := input.Read(strings.NewReader(strings.Join([]string{
		"BenchmarkPerf/profile=basic/scenario=s/conc=1 1 1 tok/s",
		"BenchmarkPerf/profile=basic/scenario=s/conc=1 1 2 tok/s",
		"BenchmarkPerf/profile=basic/scenario=s/conc=1 1 3 tok/s",
	}, "\n")), "pool")
	if err != nil {
		t.Fatal(err)
	}
	got := pick(in, []int{2, 0})
	if len(got.Results) != 2 || got.Results[0].Values[0].Value != 3 || got.Results[1].Values[0].Value != 1 {
		t.Errorf("pick(2, 0) = %v", got.Results)
	}
	rep := replicate(in, 2)
	if len(rep.Results) != 6 || string(rep.Results[4].Name) != "Perf/profile=basic/scenario=s/conc=1/copy=1" {
		t.Errorf("replicate(2): %d runs, the fifth named %s", len(rep.Results), rep.Results[4].Name)
	}
	with := &input.Input{Results: []*benchfmt.Result{{Name: benchfmt.Name("Perf/profile=basic/scenario=concurrency-sweep/conc=8-2")}}}
	if got := string(replicate(with, 2).Results[1].Name); got != "Perf/profile=basic/scenario=concurrency-sweep/conc=8/copy=1-2" {
		t.Errorf("replicate keeps the -N suffix last: got %s", got)
	}
	if got, want := spread(in, "tok/s"), 50.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("spread = %g, want %g (sd 1 of mean 2)", got, want)
	}
	if got, want := sortedConds(map[string][]string{"+10%": nil, "A/A": nil, "+5%": nil}), []string{"A/A", "+5%", "+10%"}; !slices.Equal(got, want) {
		t.Errorf("sortedConds = %v, want %v", got, want)
	}
	if got, want := slowLabel(1.05), "+5%"; got != want {
		t.Errorf("slowLabel(1.05) = %q, want %q", got, want)
	}
	wide, err := thresholds.Load("testdata/wider-tails.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := wide.Gate("basic", "concurrency-sweep", "itl-p99-ns").MinEffect; got != 0.10 {
		t.Errorf("wider-tails.yaml: itl-p99-ns min_effect %g, want 0.10", got)
	}
	c := qualityCell{cond: "A/A"}
	for _, d := range []gate.Decision{gate.Same, gate.Same, gate.Different, gate.Unknown} {
		c.add(d)
	}
	if c.target() == "" || c.different != 1 || c.same != 2 || c.unknown != 1 {
		t.Errorf("one false fail in four counts %+v and misses nothing", c)
	}
}
