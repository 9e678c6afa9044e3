package upgrade

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/vllmperf/vllmperf/internal/docfigures"
	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/gate/sequential"
	"github.com/vllmperf/vllmperf/internal/testphase"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// The sequential count's measurement (TestFiguresSequentialCount): the
// committed score pools, each draw gated as the whole suite, as the fixed
// count's table is.
const (
	seqFirst = 6  // the first look: min_samples
	seqCap   = 12 // the cap (the pools hold 16 runs)
	seqSeed  = 23
	// Decisions per cell: 60 unchanged (the false-fail target: one fail
	// in 60 is 1.7%, under it), 30 with a change (its catch rate and cost
	// are far from their targets); more would cost CI minutes.
	seqDecisionsAA, seqDecisionsSlow = 60, 30
)

// poolSides are a sequential count's two sides drawn from pools: the
// baseline gate's (a stored baseline of qualityCount runs, new runs added
// in the order of a permutation of the new pool) or the interleaved
// gate's (pairs in the order of one permutation, both sides growing).
type poolSides struct {
	t           *testing.T
	sh          suiteShape
	base, next  *input.Input
	baseIdx     []int // the baseline's runs (nil: interleaved, base grows with next)
	order       []int // the new side's runs in the order they are added
	runs        map[string]int
	old, nextFn func(profile string, copy int) *input.Input
}

func (p *poolSides) Extend(runs int, only []string) error {
	if only == nil {
		for _, name := range p.names() {
			p.runs[name] = runs
		}
		return nil
	}
	for _, name := range only {
		p.runs[name] = runs
	}
	return nil
}

// names are the benchmarks of the gated suite (every copy).
func (p *poolSides) names() []string {
	var out []string
	for _, r := range draw(p.base, []int{0}, p.sh, nil).Results {
		out = append(out, gateName(r))
	}
	return out
}

// gateName is a result's name as the gate's rows name it.
func gateName(r *benchfmt.Result) string {
	return strings.TrimPrefix(procsSuffix.ReplaceAllString(string(r.Name), ""), "Benchmark")
}

// side is the first runs[name] runs (in order) of every benchmark of in.
func (p *poolSides) side(in *input.Input, order []int, from func(string, int) *input.Input) *input.Input {
	all := draw(in, order, p.sh, from)
	out := &input.Input{Name: all.Name, Units: all.Units}
	seen := map[string]int{}
	for _, r := range all.Results {
		name := gateName(r)
		if seen[name] < p.runs[name] {
			out.Results = append(out.Results, r)
		}
		seen[name]++
	}
	return out
}

func (p *poolSides) Compare(set *thresholds.Set) (*gate.Report, error) {
	base := draw(p.base, p.baseIdx, p.sh, nil)
	if p.baseIdx == nil {
		base = p.side(p.base, p.order, p.old)
	}
	return gate.Compare(base, p.side(p.base, p.order, p.nextFn), set, gate.Options{ConfigKeys: ConfigKeys, OwnStarts: true})
}

// slowedBy is in with every time ×f and every rate ÷f: a clear slowdown
// of every point, made from the unchanged pool (no pool was recorded at
// +20%).
func slowedBy(in *input.Input, f float64) *input.Input {
	out := &input.Input{Name: in.Name, Units: in.Units}
	for _, r := range in.Results {
		c := r.Clone()
		for i, v := range c.Values {
			switch {
			case strings.HasSuffix(v.Unit, "-ns") || strings.HasSuffix(v.Unit, "sec") || v.Unit == "sec/op":
				c.Values[i].Value = v.Value * f
			case strings.HasSuffix(v.Unit, "/s"):
				c.Values[i].Value = v.Value / f
			}
		}
		out.Results = append(out.Results, c)
	}
	return out
}

// seqCell is one gate on one condition under the sequential count.
type seqCell struct {
	gate, cond            string
	out                   outcomeCell
	runs                  int // runs a side summed over the suite's benchmarks, all decisions
	atFirst               int // decided at the first look
	benchmarks, decisions int
}

// TestFiguresSequentialCount (MEASURED: about a minute of one core, more
// under the race detector) measures the sequential count (package sequential, Pocock's
// spending, first look at min_samples, cap 12) on the committed score
// pools, each draw gated as the whole suite as the fixed count's table
// is: how often it fails an unchanged server, how often it catches a
// clear +20% slowdown of every point and a +5% one, and the runs it
// costs against the fixed count's 10. It checks docs/gate.md's table
// (make figures rewrites it) and fails when the sequential count misses a
// target: unchanged fails ≤ 2%, +20% caught ≥ 95% in fewer runs than the
// fixed count.
func TestFiguresSequentialCount(t *testing.T) {
	testphase.Measured(t)
	set := qualityMeasurement(t)
	pools := readCommittedPools(t, poolSets[1].dir)
	sh := shapeOf(t, set, pools)
	design := sequential.Design{Min: seqFirst, Cap: seqCap, Spending: sequential.Pocock}
	rng := rand.New(rand.NewPCG(seqSeed, 0x5e9))
	slow20 := slowedBy(pools.seq["aa"], 1.2)
	slow20ab := [2]*input.Input{pools.ab["aa"][oldSide], slowedBy(pools.ab["aa"][newSide], 1.2)}
	var cells []*seqCell
	for _, c := range []struct {
		label     string
		seq       *input.Input
		ab        [2]*input.Input
		decisions int
	}{
		{"unchanged", pools.seq["aa"], pools.ab["aa"], seqDecisionsAA},
		{"+20% every point", slow20, slow20ab, seqDecisionsSlow},
		{"+5% every point", pools.seq["slow5"], pools.ab["slow5"], seqDecisionsSlow},
	} {
		for _, interleaved := range []bool{false, true} {
			name := "baseline gate"
			if interleaved {
				name = "interleaved"
			}
			cell := &seqCell{gate: name, cond: c.label, decisions: c.decisions, out: outcomeCell{cond: c.label}}
			for range c.decisions {
				ps := &poolSides{t: t, sh: sh, base: pools.seq["base"], runs: map[string]int{},
					nextFn: func(string, int) *input.Input { return c.seq }}
				ps.baseIdx, ps.order = rng.Perm(poolRuns)[:qualityCount], rng.Perm(poolRuns)[:seqCap]
				if interleaved {
					ps.baseIdx = nil
					ps.old = func(string, int) *input.Input { return c.ab[oldSide] }
					ps.nextFn = func(string, int) *input.Input { return c.ab[newSide] }
				}
				names := ps.names()
				cell.benchmarks = len(names)
				res, err := sequential.Run(design, set, ps, names)
				if err != nil {
					t.Fatal(err)
				}
				cell.out.add(res.Report)
				cell.runs += res.Total
				if len(res.Looks) == 1 {
					cell.atFirst++
				}
			}
			cells = append(cells, cell)
		}
	}
	docfigures.Sync(t, "docs/gate.md", "sequential-count", sequentialTable(design, cells, sh))
	for _, c := range cells {
		fixed := qualityCount * c.benchmarks * c.decisions
		switch c.cond {
		case "unchanged":
			if r := pct(c.out.fail, c.out.n); r > 2 {
				t.Errorf("%s, unchanged: the sequential count fails %.0f%%, target ≤ 2%%", c.gate, r)
			}
		case "+20% every point":
			if r := pct(c.out.fail, c.out.n); r < 95 {
				t.Errorf("%s, +20%%: the sequential count fails %.0f%%, target ≥ 95%%", c.gate, r)
			}
			if c.runs >= fixed {
				t.Errorf("%s, +20%%: the sequential count ran %d runs, the fixed count %d: want fewer", c.gate, c.runs, fixed)
			}
		}
	}
}

// sequentialTable is docs/gate.md's table of the sequential count.
func sequentialTable(d sequential.Design, cells []*seqCell, sh suiteShape) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nEach draw gated as the whole suite (each pool point %d times, each pool profile %d times); first look at %d runs a side, cap %d, %s spending (α shares %s, when each look adds the fewest runs)\n\n",
		sh.pointCopies, sh.profileCopies, d.Min, d.Cap, d.Spending.Name, sharesText(d))
	b.WriteString("| gate | true change | decisions | passes | fails | run more | runs a side (mean; fixed count: 10) | decided at the first look |\n|---|---|--:|--:|--:|--:|--:|--:|\n")
	for _, c := range cells {
		fmt.Fprintf(&b, "| %s | %s | %d | %.0f%% | %.0f%% | %.0f%% | %.1f | %.0f%% |\n", c.gate, c.cond, c.decisions,
			pct(c.out.pass, c.out.n), pct(c.out.fail, c.out.n), pct(c.out.more, c.out.n), float64(c.runs)/float64(c.decisions*c.benchmarks), pct(c.atFirst, c.decisions))
	}
	return b.String()
}

// sharesText is the α shares of looks at Min, then every Next step to the
// cap when each look asks for no more than the rule's least step.
func sharesText(d sequential.Design) string {
	var parts []string
	prev, cur := 0, d.Min
	for {
		share := d.Share(prev, cur)
		if cur >= d.Cap {
			share = 1 - d.Share(0, prev)
		}
		parts = append(parts, fmt.Sprintf("%.2f at %d", share, cur))
		if cur >= d.Cap {
			break
		}
		prev, cur = cur, d.Next(cur, 0)
	}
	return strings.Join(parts, ", ")
}
