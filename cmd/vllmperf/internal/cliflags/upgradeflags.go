package cliflags

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/render"
	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/orchestrate/upgrade"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/torchprof"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// UpgradeFlags are the flags of `vllmperf upgrade-gate`; Config turns
// them and the environment (suite.FromEnv) into an upgrade.Config.
type UpgradeFlags struct {
	Old, New           string
	OldSim, NewSim     string
	Points             []string
	Size               string
	MinPairs, MaxPairs int
	Servers            string
	Thresholds         string
	Results            string
	Output             verdict.Output
	Traces             TraceFlags
}

// Config checks the flags (changed says which were given) and returns the
// gate's configuration, with log for progress; every error is the
// caller's to fix (a usage error).
func (o *UpgradeFlags) Config(changed func(name string) bool, log io.Writer) (upgrade.Config, error) {
	if o.Old == "" || o.New == "" {
		return upgrade.Config{}, errors.New(`upgrade-gate needs --old IMAGE and --new IMAGE (a vLLM image, "sim" or "in-process")`)
	}
	if err := o.Output.Check(); err != nil {
		return upgrade.Config{}, err
	}
	servers, err := upgrade.ParseServers(o.Servers)
	if err != nil {
		return upgrade.Config{}, err
	}
	base, err := SuiteSettings(changed, o.Size, o.Thresholds)
	if err != nil {
		return upgrade.Config{}, err
	}
	traces, err := o.Traces.settings(changed)
	if err != nil {
		return upgrade.Config{}, err
	}
	maxPairs := PairCap(changed, o.MaxPairs)
	dir := o.Results
	if dir == "" {
		dir = filepath.Join("results", "upgrade-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	return upgrade.Config{
		Suite: base, Points: o.Points, MinPairs: o.MinPairs, MaxPairs: maxPairs, Servers: servers, Dir: dir, Log: log, TorchProfile: traces,
		Old: upgrade.Side{Image: o.Old, SimArgs: strings.Fields(o.OldSim)},
		New: upgrade.Side{Image: o.New, SimArgs: strings.Fields(o.NewSim)},
	}, nil
}

// SuiteSettings is the suite's configuration from the environment
// (suite.FromEnv), with the --size and --thresholds flags (changed says
// which were given) over it: the settings an upgrade gate, or each step of a
// bisection, runs its points with.
func SuiteSettings(changed func(name string) bool, size, thresholdsPath string) (suite.Config, error) {
	base, err := suite.FromEnv(false)
	if err != nil {
		return base, err
	}
	if changed("size") {
		if base.Size, err = scenario.ParseSize(size); err != nil {
			return base, fmt.Errorf("--size: %w", err)
		}
	}
	if thresholdsPath != "" {
		if base.Thresholds, err = thresholds.Resolve(thresholdsPath, "."); err != nil {
			return base, err
		}
	}
	return base, nil
}

// PairCap is Config.MaxPairs from the --max-pairs flag: 0 when it was not
// given (the default cap, or --min-pairs when that is higher).
func PairCap(changed func(name string) bool, maxPairs int) int {
	if !changed("max-pairs") {
		return 0
	}
	return maxPairs
}

// Publish writes the result: the report on stdout in --format, the
// headline and the results folder after it, gate.txt and gate.json into
// the folder, the markdown report to the step summary. Its error is the
// gate's decision as the command's result: DIFFERENT fails (exit 1),
// UNKNOWN is inconclusive (exit 3).
func (o *UpgradeFlags) Publish(res *upgrade.Result, dir string, stdout, stderr io.Writer) error {
	if err := o.Output.Publish(render.Of(res.Report), stdout, stderr, "vllmperf upgrade-gate", res.SummaryIntro(o.Old, o.New)); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nupgrade gate %s → %s: %s\n", o.Old, o.New, res.Headline())
	if line := res.ParityLine(); line != "" {
		fmt.Fprintln(stdout, line)
	}
	fmt.Fprintf(stdout, "results: %s\n", dir)
	if err := res.WriteParity(filepath.Join(dir, upgrade.ParityFile)); err != nil {
		return err
	}
	for name, format := range map[string]string{upgrade.ReportText: "full", upgrade.ReportJSON: "json"} {
		if err := render.Of(res.Report).WriteFile(filepath.Join(dir, name), format); err != nil {
			return err
		}
	}
	if len(res.ParityFailures) > 0 {
		return fmt.Errorf("output parity: %s (%s)", strings.Join(res.ParityFailures, "; "), res.Headline())
	}
	if res.Report.Outcome() == gate.OutcomeInvalid {
		return exitstatus.Usage(fmt.Errorf("%s; INVALID: a run was no sound measurement, and more pairs cannot clear it (the gate stopped): fix what the INVALID rows and checks name (a shared or throttled GPU, a slower runner) and run the gate again", res.Headline()))
	}
	switch res.Decision() {
	case gate.Different:
		return errors.New(res.Headline())
	case gate.Unknown:
		return exitstatus.Inconclusive(fmt.Sprintf("%s; raise --max-pairs (now %d) or thresholds.yaml's min_effect for the undecided metrics", res.Headline(), res.Pairs))
	}
	return nil
}

// TraceFlags are upgrade-gate's --torch-profile flags.
type TraceFlags struct {
	On     bool
	Window time.Duration
}

// settings are the captures' settings (nil when off).
func (t TraceFlags) settings(changed func(string) bool) (*torchprof.Settings, error) {
	if !t.On {
		if changed("torch-profile-window") {
			return nil, fmt.Errorf("--torch-profile-window sets up --torch-profile: add --torch-profile, or drop --torch-profile-window")
		}
		return nil, nil
	}
	if t.Window <= 0 {
		return nil, fmt.Errorf("--torch-profile-window %s: want a positive duration such as 3s", t.Window)
	}
	return &torchprof.Settings{Window: t.Window}, nil
}
