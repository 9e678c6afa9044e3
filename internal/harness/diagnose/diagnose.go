// Package diagnose reads a results folder and says where the bottleneck is,
// with the rules of the seed article's section "常见瓶颈可以按现象定位"
// (locate common bottlenecks by their symptoms). Each rule is fired by
// measured evidence from the folder (the runs' metrics, checks, server
// deltas, sampler time series and request samples) and reports the
// numbers that fired it, what to try, and which of the suite's profiles
// (basic, high-throughput, low-latency, memory-saving, speculative)
// addresses it.
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
// The limits the rules fire at are Thresholds (DefaultThresholds), each
// with its reason.
package diagnose

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vllmperf/vllmperf/internal/harness/results"
)

// Rule is one bottleneck the diagnosis looks for.
type Rule struct {
	// ID names the rule in reports and tests: "high-ttft".
	ID string
	// Title says what was found, as a heading.
	Title string
	// Seed is the seed article's sentence the rule comes from (Chinese),
	// SeedEnglish its translation.
	Seed, SeedEnglish string
	// Remedies are what to try, in the seed's order.
	Remedies []string
	// Profiles are the suite's profiles that address the bottleneck.
	Profiles []Advice

	// fire reads one run (and its profile's other runs) and returns the
	// evidence, one line per figure, and whether the rule fires.
	fire func(x *facts, p *profileFacts, th Thresholds) (evidence []string, fired bool)
}

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
	// Quiet are the rules that were checked and did not fire.
	Quiet []*Rule
	// Thresholds are the limits the rules were held to.
	Thresholds Thresholds
}

// profileFacts are the facts of one profile's runs, for rules that compare
// a run with its profile's others (warm TTFT, median acceptance).
type profileFacts struct {
	name string
	runs []*facts
}

// Run applies every rule to every run of folder f (the last repetition of
// each name is what a report shows, but every repetition is judged).
func Run(f *results.Folder, th Thresholds) (*Diagnosis, error) {
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
	d := &Diagnosis{Thresholds: th}
	for _, rule := range Rules() {
		var hits []Hit
		for _, x := range order {
			ev, fired := rule.fire(x, profiles[x.run.Profile], th)
			if fired {
				hits = append(hits, Hit{Profile: x.run.Profile, Run: x.run.Name, Rep: x.run.Rep, Evidence: ev})
			}
		}
		if len(hits) == 0 {
			d.Quiet = append(d.Quiet, rule)
			continue
		}
		d.Findings = append(d.Findings, Finding{Rule: rule, Hits: hits})
	}
	return d, nil
}

// Folder reads the results folder dir and diagnoses it with the default
// thresholds.
func Folder(dir string) (*Diagnosis, error) {
	f, err := results.ReadFolder(dir)
	if err != nil {
		return nil, err
	}
	return Run(f, DefaultThresholds)
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

// String is a one-line summary: "3 of 5 rules fired: high-ttft, ...".
func (d *Diagnosis) String() string {
	if len(d.Findings) == 0 {
		return fmt.Sprintf("no bottleneck found: %d rules checked, none fired", len(d.Quiet))
	}
	ids := make([]string, len(d.Findings))
	for i, f := range d.Findings {
		ids[i] = fmt.Sprintf("%s (%d runs)", f.Rule.ID, len(f.Hits))
	}
	return fmt.Sprintf("%d of %d rules fired: %s", len(d.Findings), len(d.Findings)+len(d.Quiet), strings.Join(ids, ", "))
}
