package gatequality

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// rate is a share of a row's decisions with its bootstrap interval.
type rate struct {
	got, lo, hi float64 // shares, 0..1
	n           int     // decisions
}

func (r rate) String() string {
	return fmt.Sprintf("%.0f%% [%.0f–%.0f%%]", 100*r.got, 100*r.lo, 100*r.hi)
}

// target is one of the protocol's targets against a row's rate.
type target struct {
	what    string
	r       rate
	atLeast bool
	pct     float64
}

func (t target) met() bool {
	if t.atLeast {
		return 100*t.r.got >= t.pct
	}
	return 100*t.r.got <= t.pct
}

// String is the table's line: "fails 96% [90–100%] (target ≥ 80%): met".
func (t target) String() string {
	sign, word := "≥", "met"
	if !t.atLeast {
		sign = "≤"
	}
	if !t.met() {
		word = "**not met**"
	}
	return fmt.Sprintf("%s %s (target %s %g%%): %s", t.what, t.r, sign, t.pct, word)
}

// row is one condition's figures.
type row struct {
	label                    string
	decisions                int
	pass, fail, other, named rate
	byProfile                map[string][2]int // changed profile → fails, decisions
	namedApplies             bool
	targets                  []target
}

// tabulate computes every condition's rates, intervals and targets (with
// no decisions: the targets' names only).
func tabulate(pr protocol, ds []decision, src *Source) []row {
	boot := rand.New(rand.NewPCG(pr.bootSeed, seedStream))
	var rows []row
	for c, cond := range pr.conditions {
		var pass, fail, other, nmd []bool
		byProfile := map[string][2]int{}
		for _, d := range ds {
			if d.cond != c {
				continue
			}
			f := d.outcome == verdict.OutcomeFail
			pass, fail = append(pass, d.outcome == verdict.OutcomePass), append(fail, f)
			other = append(other, !f && d.outcome != verdict.OutcomePass)
			nmd = append(nmd, d.named)
			if d.profile != "" {
				n := byProfile[d.profile]
				if f {
					n[0]++
				}
				n[1]++
				byProfile[d.profile] = n
			}
		}
		share := func(xs []bool) rate {
			k := 0
			for _, x := range xs {
				if x {
					k++
				}
			}
			if len(xs) == 0 {
				return rate{}
			}
			lo, hi := Interval(boot, xs, bootResamples)
			return rate{got: float64(k) / float64(len(xs)), lo: lo, hi: hi, n: len(xs)}
		}
		r := row{label: cond.label, decisions: len(fail), pass: share(pass), fail: share(fail), other: share(other), named: share(nmd), byProfile: byProfile}
		notPass := r.fail
		notPass.got, notPass.lo, notPass.hi = 1-r.pass.got, 1-r.pass.hi, 1-r.pass.lo
		switch c {
		case 0:
			r.targets = []target{{"fails", r.fail, false, 5}, {"not a pass", notPass, false, 10}}
		case 1:
			r.targets = []target{{"fails", r.fail, true, 80}}
		case 2:
			r.namedApplies = true
			r.targets = []target{{"fails", r.fail, true, 80}, {"fails naming that profile and no other", r.named, true, 80}}
		case 3:
			r.namedApplies = true
			r.targets = []target{{"fails", r.fail, true, 80}, {"fails with that profile's tail test of that metric a regression", r.named, true, 80}}
		case 4:
			r.targets = []target{{"fails", r.fail, false, 5}}
		}
		rows = append(rows, r)
	}
	return rows
}

// suiteTable writes the rows as docs/gate.md's table.
func suiteTable(pr protocol, rows []row, src *Source) string {
	var b strings.Builder
	starts := "one server start per profile per side"
	if pr.starts > 1 {
		starts = fmt.Sprintf("%d server starts per profile per side, %d runs on each", pr.starts, suiteRuns/pr.starts)
	}
	fmt.Fprintf(&b, "\nEach decision: two generated runs of the whole suite (%d points in %d profiles, %d runs a side, %s) from `baselines/sim.txt` as recorded in 48c0c24 (the copy `internal/gate/gatequality/%s`), gated with the shipped thresholds.yaml; rates with 95%% bootstrap intervals over the row's decisions (`go test -run %s ./internal/gate/gatequality`):\n\n",
		src.Points(), len(src.Profiles()), suiteRuns, starts, protocolSource, pr.test)
	b.WriteString("| true change | decisions | independent suite runs | passes (exit 0) | fails (exit 1) | exit 2 or 3 | fails naming the change |\n|---|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rows {
		named := "—"
		if r.namedApplies {
			named = r.named.String()
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s | %s |\n", r.label, r.decisions, 2*r.decisions, r.pass, r.fail, r.other, named)
	}
	b.WriteString("\nFails by the profile changed (rotating conditions):\n\n")
	for _, r := range rows {
		if len(r.byProfile) == 0 {
			continue
		}
		var parts []string
		for _, p := range src.Profiles() {
			n := r.byProfile[p]
			parts = append(parts, fmt.Sprintf("%s %d/%d", p, n[0], n[1]))
		}
		fmt.Fprintf(&b, "- %s: %s\n", r.label, strings.Join(parts, ", "))
	}
	b.WriteString("\nAgainst the protocol's targets:\n\n")
	for _, r := range rows {
		for _, tg := range r.targets {
			fmt.Fprintf(&b, "- %s: %s\n", r.label, tg)
		}
	}
	return b.String()
}
