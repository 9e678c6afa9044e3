package upgrade

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/vllmperf/vllmperf/internal/docfigures"
	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/testphase"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// The gate-quality measurement on the committed pools (TestFiguresGateQuality).
const (
	qualityCount     = 10            // runs a side (pairs): the perf-gate workflow's count
	qualityDecisions = 100           // decisions per cell
	qualitySeed      = 19            // the draws' seed
	slowedProfile    = "speculative" // the profile slowed alone
	// envTune=1 measures on the tune set instead (printed, not written):
	// how the gate's rules were chosen.
	envTune = "VLLMPERF_QUALITY_TUNE"
)

// loadedPoolsDir holds pools of the same design as the score set,
// recorded (seeds from 2,000,000, commit 4c58a1d) while five other
// sessions' builds and tests shared this machine's 2 cores: a runner that
// is not the job's alone. They are scored apart, never tuned on, and
// cannot be recorded again as they were (the load is gone).
const loadedPoolsDir = "testdata/quality/loaded"

// committedPools are the pools of testdata/quality, by condition.
type committedPools struct {
	seq map[string]*input.Input    // base, aa, slow5, slow10
	ab  map[string][2]*input.Input // aa, slow5, slow10: OLD, NEW
}

func readCommittedPools(t *testing.T, qualityDir string) committedPools {
	t.Helper()
	p := committedPools{seq: map[string]*input.Input{}, ab: map[string][2]*input.Input{}}
	for _, c := range poolConds {
		p.seq[c.name] = readInput(t, filepath.Join(qualityDir, "seq-"+c.name+".txt"))
		if c.name != "base" {
			p.ab[c.name] = [2]*input.Input{
				readInput(t, filepath.Join(qualityDir, "ab-"+c.name+"-old.txt")),
				readInput(t, filepath.Join(qualityDir, "ab-"+c.name+"-new.txt")),
			}
		}
	}
	return p
}

func readInput(t *testing.T, file string) *input.Input {
	t.Helper()
	in, err := input.ReadFile(file)
	if err != nil {
		t.Fatalf("%s: %v (record the pools: TestRecordQualityPools)", file, err)
	}
	if want := poolRuns * len(poolPoints); len(in.Results) != want {
		t.Fatalf("%s: %d results, want %d (%d runs of %d points)", file, len(in.Results), want, poolRuns, len(poolPoints))
	}
	return in
}

// suiteShape is how the committed pools are scaled up to the whole suite:
// each pool point is gated as pointCopies points, and each pool profile as
// profileCopies profiles, so that the correction covers about as many
// tests as over baselines/sim.txt (copies share their runs: the strictest
// case of the correction).
type suiteShape struct {
	pointCopies, profileCopies int
	suiteTests, suiteProfiles  int
}

func shapeOf(t *testing.T, set *thresholds.Set, pools committedPools) suiteShape {
	t.Helper()
	return shapeFor(t, set, pools, readSim(t))
}

// shapeFor scales the pools to the tests the gate makes over suite (a
// baseline gated against itself).
func shapeFor(t *testing.T, set *thresholds.Set, pools committedPools, suiteIn *input.Input) suiteShape {
	t.Helper()
	suite := compare(t, set, suiteIn, suiteIn)
	pool := compare(t, set, pools.seq["base"], pools.seq["aa"])
	perSuite := float64(suite.Comparisons) / float64(len(suite.Profiles))
	perPool := float64(pool.Comparisons) / float64(len(pool.Profiles))
	return suiteShape{
		pointCopies:   max(1, int(perSuite/perPool+0.5)),
		profileCopies: max(1, (len(suite.Profiles)+len(pool.Profiles)-1)/len(pool.Profiles)),
		suiteTests:    suite.Comparisons, suiteProfiles: len(suite.Profiles),
	}
}

func compare(t *testing.T, set *thresholds.Set, base, next *input.Input) *gate.Report {
	t.Helper()
	rep, err := gate.Compare(base, next, set, gate.Options{ConfigKeys: ConfigKeys, OwnStarts: true})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// draw is the input with runs idx of every benchmark of in, gated as the
// suite's shape: profile copy k of profile P is named P-copyK (k > 0), and
// from is where each copy's runs come from (nil: in itself).
func draw(in *input.Input, idx []int, sh suiteShape, from func(profile string, copy int) *input.Input) *input.Input {
	out := &input.Input{Name: in.Name, Units: in.Units}
	for pc := range sh.profileCopies {
		for _, i := range idx {
			for pt := range poolPoints {
				src := in
				r0 := src.Results[i*len(poolPoints)+pt]
				profile := profileOf(r0)
				if from != nil {
					src = from(profile, pc)
				}
				r := src.Results[i*len(poolPoints)+pt]
				for cp := range sh.pointCopies {
					out.Results = append(out.Results, renamed(r, pc, cp))
				}
			}
		}
	}
	return out
}

func profileOf(r *benchfmt.Result) string {
	n, err := benchname.Parse(strings.TrimPrefix(procsSuffix.ReplaceAllString(string(r.Name), ""), benchname.Bench+"/"))
	if err != nil {
		return ""
	}
	return n.Profile
}

// renamedKey is one copy of one result.
type renamedKey struct {
	r      *benchfmt.Result
	pc, cp int
}

// renamedCache holds every copy made: the pools' results are never
// changed, and the quality tests draw the same copies thousands of times.
var renamedCache sync.Map // renamedKey → *benchfmt.Result

// renamed is r as point copy cp of profile copy pc (the same result for
// the same copy, made once).
func renamed(r *benchfmt.Result, pc, cp int) *benchfmt.Result {
	k := renamedKey{r, pc, cp}
	if c, ok := renamedCache.Load(k); ok {
		return c.(*benchfmt.Result)
	}
	c, _ := renamedCache.LoadOrStore(k, rename(r, pc, cp))
	return c.(*benchfmt.Result)
}

// rename makes r's copy for renamed.
func rename(r *benchfmt.Result, pc, cp int) *benchfmt.Result {
	c := r.Clone()
	name := procsSuffix.ReplaceAllString(string(c.Name), "")
	if pc > 0 {
		name = strings.Replace(name, "profile="+profileOf(r), fmt.Sprintf("profile=%s-copy%d", profileOf(r), pc), 1)
	}
	if cp > 0 {
		name += fmt.Sprintf("/copy=%d", cp)
	}
	c.Name = benchfmt.Name(name)
	return c
}

// outcomeCell counts one gate's outcomes on one condition.
type outcomeCell struct {
	gate, cond          string
	n, pass, fail, more int
	named               int // one-profile cells: fails whose regressions are all in the slowed profile
	oneProfile          bool
}

func (c *outcomeCell) add(rep *gate.Report) {
	c.n++
	switch rep.Outcome() {
	case verdict.OutcomePass:
		c.pass++
	case verdict.OutcomeFail:
		c.fail++
		if c.oneProfile && namesOnly(rep, slowedProfile) {
			c.named++
		}
	default:
		c.more++
	}
}

// namesOnly: the report names only profile (not a copy of it), by the
// profile's own verdict or by regressions of its rows, and names it.
func namesOnly(rep *gate.Report, profile string) bool {
	named := false
	for _, p := range rep.RegressedProfiles() {
		if p != profile {
			return false
		}
		named = true
	}
	for _, row := range rep.Rows {
		if row.Verdict == gate.Regression {
			if row.Profile != profile {
				return false
			}
			named = true
		}
	}
	return named
}

// qualityCells draws the decisions of every cell.
func qualityCells(t *testing.T, set *thresholds.Set, pools committedPools, sh suiteShape, decisions int) []outcomeCell {
	t.Helper()
	rng := rand.New(rand.NewPCG(qualitySeed, 0x9a7e))
	one := func(slowed, other *input.Input) func(string, int) *input.Input {
		return func(profile string, copy int) *input.Input {
			if profile == slowedProfile && copy == 0 {
				return slowed
			}
			return other
		}
	}
	var cells []outcomeCell
	for _, c := range []struct {
		label, cond string
		one         bool
	}{{"unchanged", "aa", false}, {"+5% every point", "slow5", false}, {"+10% every point", "slow10", false}, {"+10% on " + slowedProfile + " only", "slow10", true}} {
		seqCell := outcomeCell{gate: fmt.Sprintf("baseline gate, %d runs a side", qualityCount), cond: c.label, oneProfile: c.one}
		abCell := outcomeCell{gate: fmt.Sprintf("interleaved, %d pairs", qualityCount), cond: c.label, oneProfile: c.one}
		seqFrom, abFrom := func(string, int) *input.Input { return pools.seq[c.cond] }, func(string, int) *input.Input { return pools.ab[c.cond][newSide] }
		abOld := func(string, int) *input.Input { return pools.ab[c.cond][oldSide] }
		if c.one {
			seqFrom = one(pools.seq[c.cond], pools.seq["aa"])
			abFrom = one(pools.ab[c.cond][newSide], pools.ab["aa"][newSide])
			abOld = one(pools.ab[c.cond][oldSide], pools.ab["aa"][oldSide])
		}
		for range decisions {
			bi, ni := rng.Perm(poolRuns)[:qualityCount], rng.Perm(poolRuns)[:qualityCount]
			seqCell.add(compare(t, set, draw(pools.seq["base"], bi, sh, nil), draw(pools.seq["base"], ni, sh, seqFrom)))
			pi := rng.Perm(poolRuns)[:qualityCount]
			abCell.add(compare(t, set, draw(pools.seq["base"], pi, sh, abOld), draw(pools.seq["base"], pi, sh, abFrom)))
		}
		cells = append(cells, seqCell, abCell)
	}
	return cells
}

// qualityTable writes the cells as docs/gate.md's table.
func qualityTable(cells []outcomeCell, sh suiteShape, decisions int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d decisions a row; each draw gated as the whole suite (each pool point %d times, each pool profile %d times: %d profiles, as baselines/sim.txt's %d headline tests in %d profiles)\n\n",
		decisions, sh.pointCopies, sh.profileCopies, 2*sh.profileCopies, sh.suiteTests, sh.suiteProfiles)
	b.WriteString("| gate | true change | passes (exit 0) | fails (exit 1) | run more (exit 3) | fails naming only the slowed profile |\n|---|---|--:|--:|--:|--:|\n")
	for _, c := range cells {
		named := "—"
		if c.oneProfile {
			named = fmt.Sprintf("%.0f%%", pct(c.named, c.n))
		}
		fmt.Fprintf(&b, "| %s | %s | %.0f%% | %.0f%% | %.0f%% | %s |\n", c.gate, c.cond, pct(c.pass, c.n), pct(c.fail, c.n), pct(c.more, c.n), named)
	}
	b.WriteString("\nAgainst the targets, on these pools:\n\n")
	for _, c := range cells {
		for _, tg := range targetsOf(c) {
			fmt.Fprintf(&b, "- %s, %s: %s\n", c.gate, c.cond, tg)
		}
	}
	return b.String()
}

// targetCheck is one of the targets against a cell's rate.
type targetCheck struct {
	what    string // "passes", "fails naming only the slowed profile", ...
	got     float64
	atLeast bool // the target is a floor (else a ceiling)
	target  float64
}

// met: the rate is on the right side of the target.
func (c targetCheck) met() bool {
	if c.atLeast {
		return c.got >= c.target
	}
	return c.got <= c.target
}

// String is the table's line: "fails 96% (target ≥ 80%): met".
func (c targetCheck) String() string {
	sign, word := "≥", "met"
	if !c.atLeast {
		sign = "≤"
	}
	if !c.met() {
		word = "**not met**"
	}
	return fmt.Sprintf("%s %.0f%% (target %s %g%%): %s", c.what, c.got, sign, c.target, word)
}

// targetsOf are the targets that apply to the cell, with its rates.
func targetsOf(c outcomeCell) []targetCheck {
	switch {
	case c.cond == "unchanged":
		return []targetCheck{{"passes", pct(c.pass, c.n), true, 95}, {"fails", pct(c.fail, c.n), false, 2}, {"run more", pct(c.more, c.n), false, 3}}
	case c.oneProfile:
		return []targetCheck{{"fails", pct(c.fail, c.n), true, 80}, {"fails naming only the slowed profile", pct(c.named, c.n), true, 80}}
	case strings.HasPrefix(c.cond, "+10%"):
		return []targetCheck{{"fails", pct(c.fail, c.n), true, 95}}
	case strings.HasPrefix(c.cond, "+5%") && strings.HasPrefix(c.gate, "interleaved"):
		return []targetCheck{{"fails", pct(c.fail, c.n), true, 80}}
	}
	return nil
}

// TestFiguresGateQuality measures the gates on the committed pools
// (testdata/quality: every run on a server of its own, seeds none shared)
// with the repository's thresholds.yaml and gate rules, which were chosen
// on the tune set (envTune=1 prints its table), scores them on the score
// set, and checks docs/gate.md's table (make figures rewrites it). It fails when the score set misses
// one of the targets: a change to the gate that costs it quality
// fails make test, not only the table.
func TestFiguresGateQuality(t *testing.T) {
	testphase.Measured(t)
	set := qualityMeasurement(t)
	if os.Getenv(envTune) == "1" { // the rules' own pools: print, never written
		pools := readCommittedPools(t, poolSets[0].dir)
		sh := shapeOf(t, set, pools)
		t.Log(qualityTable(qualityCells(t, set, pools, sh, qualityDecisions), sh, qualityDecisions))
		return
	}
	pools := readCommittedPools(t, poolSets[1].dir) // scored on the set the rules were not chosen on
	sh := shapeOf(t, set, pools)
	cells := qualityCells(t, set, pools, sh, qualityDecisions)
	table := qualityTable(cells, sh, qualityDecisions)
	docfigures.Sync(t, "docs/gate.md", "gate-quality", table)
	for _, c := range cells {
		for _, tg := range targetsOf(c) {
			if !tg.met() {
				t.Errorf("score set, %s, %s: %s", c.gate, c.cond, tg)
			}
		}
	}
}

// qualityMeasurement starts a gate-quality measurement: skipped under the
// race detector, parallel to the other, with the repository's
// thresholds.yaml.
func qualityMeasurement(t *testing.T) *thresholds.Set {
	t.Helper()
	if raceEnabled {
		t.Skip("a measurement of some 50 seconds, minutes under the race detector: make test runs it without -race, with TestTiming*")
	}
	t.Parallel()
	set, err := thresholds.Load(filepath.Join(docfigures.ModuleRoot(t), "thresholds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestFiguresGateQualityLoaded measures the same gates on the loaded set,
// pools recorded while other jobs shared the runner's cores (what
// contention costs), and checks docs/gate.md's table of them. Its rates
// are reported, not held to the targets.
func TestFiguresGateQualityLoaded(t *testing.T) {
	testphase.Measured(t)
	set := qualityMeasurement(t)
	loaded := readCommittedPools(t, loadedPoolsDir)
	sh := shapeOf(t, set, loaded)
	docfigures.Sync(t, "docs/gate.md", "gate-quality-loaded", qualityTable(qualityCells(t, set, loaded, sh, qualityDecisions), sh, qualityDecisions))
}
