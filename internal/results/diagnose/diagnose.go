// Package diagnose reads a results folder and says where the bottleneck is,
// with the rules of the seed article's section "常见瓶颈可以按现象定位"
// (locate common bottlenecks by their symptoms). Each rule is fired by
// measured evidence from the folder (the runs' metrics, checks, server
// deltas, sampler time series and request samples) and reports the
// numbers that fired it, what to try, and which of the suite's profiles
// addresses it: a profile says so itself, under diagnose: in its file
// (scenarios/profiles/), in words that quote its own flag values.
//
// The rules, in order:
//
//   - high-ttft: TTFT p99 of many decode steps with a waiting queue or
//     long prompts → chunked prefill, prefix caching, prefill/decode
//     disaggregation.
//   - tpot-jitter: per-request TPOT or chunk gaps that vary, with the
//     seed's causes checked: batch-size swings, preemptions, speculative
//     acceptance.
//   - kv-pressure: KV-cache usage near the ceiling → fp8 KV cache, a
//     shorter context, more memory.
//   - small-batch: requests wait while the running batch is small, the KV
//     cache is free and tokens/s is low → raise --max-num-seqs.
//   - cold-start: the first request after start is much slower than warm
//     ones → send warm-up requests.
//
// The limits the rules fire at are thresholds.yaml's diagnose: (package
// thresholds' Diagnosis, each with its reason).
package diagnose

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// Rule is one bottleneck the diagnosis looks for.
type Rule struct {
	// ID names the rule in reports and tests: "high-ttft".
	ID string
	// Title says what was found, as a heading.
	Title string
	// Remedies are what to try, in the seed's order.
	Remedies []string
	// Profiles are the suite's profiles that address the bottleneck:
	// advice for every profile (set here), then each profile file's
	// diagnose: entry for the rule (see Rules).
	Profiles []Advice

	// fire reads one run (and its profile's other runs).
	fire func(x *facts, p *profileFacts, th thresholds.Diagnosis) reading
}

// outcome is what a rule made of one run.
type outcome int

const (
	// notApplicable: the rule is not about such a run (a load rule and
	// the start-up run).
	notApplicable outcome = iota
	// notJudged: the run lacks a figure the rule needs.
	notJudged
	// judgedQuiet: the rule read the run and did not fire.
	judgedQuiet
	// judgedFired: the rule fired on the run.
	judgedFired
)

// reading is a rule's outcome on one run: the evidence when it fired, what
// was missing when it could not judge.
type reading struct {
	outcome  outcome
	evidence []string
	missing  string
}

func skip() reading               { return reading{outcome: notApplicable} }
func quiet() reading              { return reading{outcome: judgedQuiet} }
func fired(ev []string) reading   { return reading{outcome: judgedFired, evidence: ev} }
func lacking(what string) reading { return reading{outcome: notJudged, missing: what} }

// Advice names a profile of ours and why it helps.
type Advice struct {
	// Profile is a built-in profile's name, or "every profile" when no
	// flag of any profile changes the outcome.
	Profile string
	Why     string
}

// Hit is one run on which a rule fired.
type Hit struct {
	Profile string
	// Run is the run's name (profile=P/scenario=S/POINT); Rep its
	// repetition.
	Run string
	Rep int
	// Evidence are the numbers that fired the rule, one figure a line,
	// each with the threshold it was held to.
	Evidence []string
}

// Finding is a rule that fired, with every run it fired on.
type Finding struct {
	Rule *Rule
	Hits []Hit
	Coverage
}

// Coverage says on how many runs a rule could judge, and what the others
// lacked.
type Coverage struct {
	// Judged counts the runs the rule read (fired or quiet).
	Judged int
	// Missing are the figures runs lacked, with how many runs lacked each,
	// in order of first appearance.
	Missing []Missing
}

// Missing is a figure some runs lacked.
type Missing struct {
	What string
	Runs int
}

// Checked is a rule that was checked and did not fire, or could not be
// checked (Judged 0).
type Checked struct {
	Rule *Rule
	Coverage
}

// Profiles returns the profiles the hits are on, in order of first hit.
func (f Finding) Profiles() []string {
	var out []string
	for _, h := range f.Hits {
		if !slices.Contains(out, h.Profile) {
			out = append(out, h.Profile)
		}
	}
	return out
}

// Diagnosis is what the rules found in a results folder.
type Diagnosis struct {
	// Findings are the rules that fired, in rule order.
	Findings []Finding
	// Quiet are the rules that judged at least one run and fired on none.
	Quiet []Checked
	// Unchecked are the rules that could judge no run: no run had the
	// figures they need (Missing says which), or none was of their kind.
	Unchecked []Checked
	// Thresholds are the limits the rules were held to.
	Thresholds thresholds.Diagnosis
}

// profileFacts are the facts of one profile's runs, for rules that compare
// a run with its profile's others (warm TTFT, median acceptance).
type profileFacts struct {
	name string
	runs []*facts
}

// Run applies every rule to every run of folder f (the last repetition of
// each name is what a report shows, but every repetition is judged).
func Run(f *results.Folder, th thresholds.Diagnosis) (*Diagnosis, error) {
	profiles := map[string]*profileFacts{}
	var order []*facts
	for _, r := range f.Summary.Runs {
		x, err := newFacts(f, r, th)
		if err != nil {
			return nil, err
		}
		p := profiles[r.Profile]
		if p == nil {
			p = &profileFacts{name: r.Profile}
			profiles[r.Profile] = p
		}
		p.runs = append(p.runs, x)
		order = append(order, x)
	}
	all, err := Rules()
	if err != nil {
		return nil, err
	}
	d := &Diagnosis{Thresholds: th}
	for _, rule := range all {
		var hits []Hit
		var cov Coverage
		for _, x := range order {
			r := rule.fire(x, profiles[x.run.Profile], th)
			switch r.outcome {
			case judgedFired:
				hits = append(hits, Hit{Profile: x.run.Profile, Run: x.run.Name, Rep: x.run.Rep, Evidence: r.evidence})
				cov.Judged++
			case judgedQuiet:
				cov.Judged++
			case notJudged:
				cov.add(r.missing)
			}
		}
		switch {
		case len(hits) > 0:
			d.Findings = append(d.Findings, Finding{Rule: rule, Hits: hits, Coverage: cov})
		case cov.Judged > 0:
			d.Quiet = append(d.Quiet, Checked{Rule: rule, Coverage: cov})
		default:
			d.Unchecked = append(d.Unchecked, Checked{Rule: rule, Coverage: cov})
		}
	}
	return d, nil
}

func (c *Coverage) add(what string) {
	for i := range c.Missing {
		if c.Missing[i].What == what {
			c.Missing[i].Runs++
			return
		}
	}
	c.Missing = append(c.Missing, Missing{What: what, Runs: 1})
}

// NotJudged says what the runs a rule could not judge lacked: "2 runs
// lack kv_cache_usage_perc during the load"; "" when it judged them all.
func (c Coverage) NotJudged() string {
	var parts []string
	for _, m := range c.Missing {
		runs := "runs lack"
		if m.Runs == 1 {
			runs = "run lacks"
		}
		parts = append(parts, fmt.Sprintf("%d %s %s", m.Runs, runs, m.What))
	}
	return strings.Join(parts, "; ")
}

// Folder reads the results folder dir and diagnoses it with the default
// thresholds.
func Folder(dir string) (*Diagnosis, error) {
	f, err := results.ReadFolder(dir)
	if err != nil {
		return nil, err
	}
	return Run(f, thresholds.DefaultDiagnosis)
}

// Finding returns the finding of the rule with id, if it fired.
func (d *Diagnosis) Finding(id string) (Finding, bool) {
	for _, f := range d.Findings {
		if f.Rule.ID == id {
			return f, true
		}
	}
	return Finding{}, false
}

// String is a one-line summary: "3 of 5 rules fired: high-ttft (2 runs),
// ...", and the rules that could not be checked.
func (d *Diagnosis) String() string {
	total := len(d.Findings) + len(d.Quiet) + len(d.Unchecked)
	var out string
	if len(d.Findings) == 0 {
		out = fmt.Sprintf("no bottleneck found: %d of %d rules checked, none fired", len(d.Quiet), total)
	} else {
		ids := make([]string, len(d.Findings))
		for i, f := range d.Findings {
			runs := "runs"
			if len(f.Hits) == 1 {
				runs = "run"
			}
			ids[i] = fmt.Sprintf("%s (%d %s)", f.Rule.ID, len(f.Hits), runs)
		}
		out = fmt.Sprintf("%d of %d rules fired: %s", len(d.Findings), total, strings.Join(ids, ", "))
	}
	if len(d.Unchecked) > 0 {
		ids := make([]string, len(d.Unchecked))
		for i, u := range d.Unchecked {
			ids[i] = u.Rule.ID
		}
		out += fmt.Sprintf("; not checked for lack of data: %s", strings.Join(ids, ", "))
	}
	return out
}
