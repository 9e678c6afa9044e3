package gatequality

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/vllmperf/vllmperf/internal/docfigures"
	"github.com/vllmperf/vllmperf/internal/harness/benchname"
	"github.com/vllmperf/vllmperf/internal/harness/gate"
	"github.com/vllmperf/vllmperf/internal/harness/thresholds"
	"github.com/vllmperf/vllmperf/internal/harness/units"
	"github.com/vllmperf/vllmperf/internal/harness/verdict"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// The protocol's constants (docs/gate.md, "Gate quality as the suite
// runs"): fixed before any side was generated.
const (
	suiteRuns     = 10        // runs a side: the perf-gate workflow's count
	suiteDecision = 50        // decisions per condition, each its own two sides
	seedTop       = 3_000_000 // side s of decision i of condition c: PCG(seedTop+1000c+2i+s, seedStream)
	seedStream    = 0x5017e
	bootSeed      = 3_999_999 // the intervals' resampling
	bootResamples = 10_000
	digestsFile   = "testdata/digests.txt"
	// envRecord=1 generates the sides and writes their digests, without
	// gating them: the recording, committed before the table.
	envRecord = "VLLMPERF_RECORD_SUITE_QUALITY"
)

// tailUnits are the P99s the tail conditions change, in turn.
var tailUnits = []string{units.TTFTP99, units.TPOTP99, units.ITLP99}

// condition is one row of the protocol: the new side's change for
// decision i, the profile and unit it targets (for the rotating ones).
type condition struct {
	label  string
	change func(s *Source, i int) (Change, string, string) // change, profile, unit
}

var conditions = []condition{
	{"unchanged (A/A)", func(*Source, int) (Change, string, string) { return Change{}, "", "" }},
	{"+5% every point", func(s *Source, _ int) (Change, string, string) { return s.SlowAll(1.05), "", "" }},
	{"+10% on one profile", func(s *Source, i int) (Change, string, string) {
		p := s.Profiles()[i%len(s.Profiles())]
		return Change{Slowdown: map[string]float64{p: 1.10}}, p, ""
	}},
	{"+20% tail on one profile", func(s *Source, i int) (Change, string, string) { return tailChange(s, i, 1.20) }},
	{"−20% tail on one profile (improvement)", func(s *Source, i int) (Change, string, string) { return tailChange(s, i, 0.80) }},
}

// tailChange scales one P99 of every point of one profile: decision i
// takes profile i mod 5 and unit ⌊i/5⌋ mod 3.
func tailChange(s *Source, i int, f float64) (Change, string, string) {
	ps := s.Profiles()
	p, u := ps[i%len(ps)], tailUnits[(i/len(ps))%len(tailUnits)]
	return Change{Scale: map[string]float64{p + " " + u: f}}, p, u
}

// decision is one gated pair of generated suite runs.
type decision struct {
	cond, i        int
	profile, unit  string
	outcome        verdict.Outcome
	named          bool // the report names the changed profile (and metric) as the protocol asks
	baseDig, newDg string
}

// pair generates decision i of condition c.
func pair(src *Source, c, i int) (base, next *gate.Input, profile, unit string) {
	ch, profile, unit := conditions[c].change(src, i)
	side := func(s int, ch Change) *gate.Input {
		rng := rand.New(rand.NewPCG(uint64(seedTop+1000*c+2*i+s), seedStream))
		return src.Side(rng, suiteRuns, fmt.Sprintf("cond%d-decision%d-side%d", c, i, s), ch)
	}
	return side(0, Change{}), side(1, ch), profile, unit
}

// decide gates every decision of every condition on the machine's cores;
// gateIt false only generates and digests them (the recording).
func decide(t *testing.T, src *Source, set *thresholds.Set, gateIt bool) []decision {
	t.Helper()
	var jobs []decision
	for c := range conditions {
		for i := range suiteDecision {
			jobs = append(jobs, decision{cond: c, i: i})
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				d := &jobs[k]
				base, nw, profile, unit := pair(src, d.cond, d.i)
				d.profile, d.unit, d.baseDig, d.newDg = profile, unit, Digest(base), Digest(nw)
				if !gateIt {
					continue
				}
				rep, err := gate.Compare(base, nw, set, gate.Options{})
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					continue
				}
				d.outcome, d.named = rep.Outcome(), named(rep, profile, unit)
			}
		}()
	}
	for k := range jobs {
		next <- k
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	return jobs
}

// named: for a tail change, the changed profile's tail test of that unit
// is a regression; for a profile's slowdown, the report names that
// profile and no other (profile tests, REGRESSION rows, failed limits).
func named(rep *gate.Report, profile, unit string) bool {
	if profile == "" {
		return false
	}
	if unit != "" {
		for _, tl := range rep.Tails {
			if tl.Profile == profile && tl.Metric == unit && tl.Regression {
				return true
			}
		}
		return false
	}
	seen := false
	name := func(p string) {
		if p == profile {
			seen = true
		} else {
			seen, profile = false, "\x00other" // another profile named: never true again
		}
	}
	for _, p := range rep.RegressedProfiles() {
		name(p)
	}
	for _, row := range rep.Rows {
		if row.Verdict == gate.Regression || row.Verdict == gate.Missing {
			name(row.Profile)
		}
	}
	for _, c := range rep.Checks {
		if c.Status == gate.CheckFail || c.Status == gate.CheckMissing {
			name(profileOf(c.Name))
		}
	}
	return seen && profile != "\x00other"
}

func profileOf(bench string) string {
	n, err := benchname.Parse(strings.TrimPrefix(trimProcs(bench), benchname.Bench+"/"))
	if err != nil {
		return ""
	}
	return n.Profile
}

// loadSuite reads the source, the thresholds and checks the run is one
// the measurement may make.
func loadSuite(t *testing.T) (*Source, *thresholds.Set) {
	t.Helper()
	root := docfigures.ModuleRoot(t)
	in, err := gate.ReadFile(filepath.Join(root, "baselines", "sim.txt"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewSource(in)
	if err != nil {
		t.Fatal(err)
	}
	set, err := thresholds.Load(filepath.Join(root, "thresholds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return src, set
}

// digestLine is a decision's line of digestsFile.
func digestLine(d decision) string {
	return fmt.Sprintf("%d %d %s %s", d.cond, d.i, d.baseDig, d.newDg)
}

// TestFiguresGateQualitySuite is the protocol's measurement (docs/gate.md,
// "Gate quality as the suite runs"): it regenerates the 500 suite runs
// from baselines/sim.txt and the protocol's seeds, checks them against the
// recorded digests, gates every pair with the shipped thresholds.yaml,
// checks docs/gate.md's table and fails when a target is missed.
//
//	VLLMPERF_RECORD_SUITE_QUALITY=1 go test -run TestFiguresGateQualitySuite ./internal/harness/gatequality  # the recording (digests only)
func TestFiguresGateQualitySuite(t *testing.T) {
	testphase.Measured(t)
	if raceEnabled {
		t.Skip("a measurement of 1.5 to 3 minutes on 2 cores (250 whole-suite gate decisions), far longer under the race detector: make test runs it without -race, in the measured phase")
	}
	src, set := loadSuite(t)
	if os.Getenv(envRecord) == "1" {
		if _, err := os.Stat(digestsFile); err == nil {
			t.Fatalf("%s exists: the pools were recorded once and are never recorded again (docs/gate.md's protocol)", digestsFile)
		}
		var b strings.Builder
		b.WriteString("# condition decision sha256(base side) sha256(new side): TestFiguresGateQualitySuite's generated suite runs\n")
		for _, d := range decide(t, src, set, false) {
			b.WriteString(digestLine(d) + "\n")
		}
		if err := os.WriteFile(digestsFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s written (nothing gated)", digestsFile)
		return
	}
	want := readDigests(t)
	ds := decide(t, src, set, true)
	for _, d := range ds {
		if got := digestLine(d); got != want[[2]int{d.cond, d.i}] {
			t.Fatalf("condition %d decision %d: generated sides differ from the recorded digests (%s): the generator, the source or the seeds changed; the protocol's pools are regenerated, never recorded again",
				d.cond, d.i, digestsFile)
		}
	}
	rows := tabulate(ds, src)
	docfigures.Sync(t, "docs/gate.md", "gate-quality-suite", suiteTable(rows, src))
	open := readOpenMisses(t)
	for _, r := range rows {
		for _, tg := range r.targets {
			key := r.label + ": " + tg.what
			switch {
			case !tg.met() && open[key]:
				t.Logf("OPEN MISS (%s, issue 33): %s: %s", openMissesFile, r.label, tg)
			case !tg.met():
				t.Errorf("%s: %s", r.label, tg)
			case open[key]:
				t.Errorf("%s: %s: met now: remove %q from %s", r.label, tg, key, openMissesFile)
			}
			delete(open, key)
		}
	}
	for key := range open {
		t.Errorf("%s lists %q, which is no target of the protocol", openMissesFile, key)
	}
}

// openMissesFile lists the protocol's targets the frozen rule misses, as
// scored once (docs/gate.md, "Gate quality as the suite runs"): "LABEL:
// WHAT" a line. A listed miss is logged, not failed, so that the scored
// table can land; a miss not listed fails, and so does a listed one that
// is met (the list never outlives a fix). A rule change that meets them is
// scored on a new protocol with new seeds, never by editing this list.
const openMissesFile = "testdata/open-misses.txt"

func readOpenMisses(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(openMissesFile)
	if err != nil {
		t.Fatalf("%v: the protocol's open misses (an empty file when every target is met)", err)
	}
	open := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			open[line] = true
		}
	}
	return open
}

func readDigests(t *testing.T) map[[2]int]string {
	t.Helper()
	f, err := os.Open(digestsFile)
	if err != nil {
		t.Fatalf("%v: record the pools once (%s=1), never again", err, envRecord)
	}
	defer f.Close()
	out := map[[2]int]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		var c, i int
		if _, err := fmt.Sscanf(line, "%d %d", &c, &i); err != nil {
			t.Fatalf("%s: %q: %v", digestsFile, line, err)
		}
		out[[2]int{c, i}] = line
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) != len(conditions)*suiteDecision {
		t.Fatalf("%s: %d decisions, want %d", digestsFile, len(out), len(conditions)*suiteDecision)
	}
	return out
}
