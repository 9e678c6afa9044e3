package cliflags

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/vllmperf/vllmperf/internal/orchestrate/bisect"
	"github.com/vllmperf/vllmperf/internal/orchestrate/upgrade"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// BisectFlags are the flags of `vllmperf bisect`: the candidate file and the
// upgrade gate's settings of every step.
type BisectFlags struct {
	Candidates         string
	Points             []string
	Size               string
	MinPairs, MaxPairs int
	Servers            string
	Thresholds         string
	Results            string
}

// Config checks the flags (changed says which were given) and returns the
// bisection's configuration, with log for progress; every error is the
// caller's to fix.
func (o *BisectFlags) Config(changed func(name string) bool, log io.Writer) (bisect.Config, error) {
	if o.Candidates == "" {
		return bisect.Config{}, errors.New(`bisect needs --candidates FILE: the builds in order, one a line, the known-good first and the known-bad last (docs/bisect.md)`)
	}
	cands, err := bisect.ReadCandidates(o.Candidates)
	if err != nil {
		return bisect.Config{}, err
	}
	servers, err := upgrade.ParseServers(o.Servers)
	if err != nil {
		return bisect.Config{}, err
	}
	base, err := SuiteSettings(changed, o.Size, o.Thresholds)
	if err != nil {
		return bisect.Config{}, err
	}
	maxPairs := PairCap(changed, o.MaxPairs)
	if _, err := upgrade.SelectPoints(upgrade.Builtin(), base.Size, o.Points); err != nil {
		return bisect.Config{}, err
	}
	dir := o.Results
	if dir == "" {
		dir = filepath.Join("results", "bisect-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	return bisect.Config{
		Gate:       upgrade.Config{Suite: base, Points: o.Points, MinPairs: o.MinPairs, MaxPairs: maxPairs, Servers: servers, Log: log},
		Candidates: cands, Dir: dir, Log: log,
	}, nil
}

// Publish writes the result: every step and the outcome with the time
// spent on stdout, the report page into the results folder. Its error is
// the outcome as the command's result: no first bad build named is
// inconclusive (exit 3).
func (o *BisectFlags) Publish(res *bisect.Result, dir string, stdout io.Writer) error {
	fmt.Fprintf(stdout, "bisect %s: %d builds, known good %s, known bad %s\n", o.Candidates, len(res.Candidates), res.Candidates[0].Name(), res.Candidates[len(res.Candidates)-1].Name())
	for _, st := range res.Steps {
		reused := ""
		if st.Reused {
			reused = ", runs reused"
		}
		fmt.Fprintf(stdout, "  step %d: line %d (%s): %s: %s (%s%s)\n", st.N, st.Line, st.Build, st.Verdict, st.Headline, st.Elapsed.Round(time.Millisecond), reused)
		if st.Parity != "" {
			fmt.Fprintf(stdout, "          %s\n", st.Parity)
		}
	}
	fmt.Fprintf(stdout, "%s\n", res.Headline())
	fmt.Fprintf(stdout, "time spent: %s (predicted: %s)\n", res.Elapsed.Round(time.Millisecond), res.Prediction)
	page, err := res.WritePage(dir, o.Candidates)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "results: %s\nreport: %s\n", dir, page)
	if !res.Found() {
		return exitstatus.Inconclusive(res.Reason)
	}
	return nil
}
