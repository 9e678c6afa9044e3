package upgrade

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/internal/exitstatus"
	"github.com/vllmperf/vllmperf/internal/harness/gate"
	"github.com/vllmperf/vllmperf/internal/harness/scenario"
	"github.com/vllmperf/vllmperf/internal/harness/suite"
	"github.com/vllmperf/vllmperf/internal/harness/thresholds"
	"github.com/vllmperf/vllmperf/internal/harness/verdict"
)

// The files Publish writes next to old.txt and new.txt.
const (
	ReportText = "gate.txt"
	ReportJSON = "gate.json"
)

// Flags are the flags of `vllmperf upgrade-gate`; Config turns them and
// the environment (suite.FromEnv) into a Config.
type Flags struct {
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

// Register defines the flags on f, with the gate's defaults.
func (o *Flags) Register(f *pflag.FlagSet) {
	f.StringVar(&o.Old, "old", "", `the image to upgrade from: a vLLM image, "sim" or "in-process"`)
	f.StringVar(&o.New, "new", "", `the image to upgrade to: a vLLM image, "sim" or "in-process"`)
	f.StringVar(&o.OldSim, "old-sim-args", "", "--sim-* arguments for OLD only (simulators; VLLMPERF_SIM_ARGS applies to both)")
	f.StringVar(&o.NewSim, "new-sim-args", "", `--sim-* arguments for NEW only, e.g. "--sim-slowdown 1.1"`)
	f.StringSliceVar(&o.Points, "points", DefaultPoints, "scenario points, comma-separated; path.Match globs per element, a scenario selects all its points")
	f.StringVar(&o.Size, "size", "", "scenario size: full or quick (default $"+suite.EnvSize+", else full)")
	f.IntVar(&o.MinPairs, "min-pairs", DefaultMinPairs, "pairs before the first comparison")
	f.IntVar(&o.MaxPairs, "max-pairs", DefaultMaxPairs, "the most pairs: UNKNOWN after that")
	f.StringVar(&o.Servers, "servers", string(DefaultServers), "restart: one server at a time, restarted per block (one GPU); keep: both up at once")
	f.StringVar(&o.Thresholds, "thresholds", "", "thresholds.yaml (default $"+suite.EnvThresholds+", else thresholds.yaml at the module root if present, else the shipped one, built in)")
	f.StringVar(&o.Results, "results", "", "results folder (default results/upgrade-<UTC timestamp>)")
	o.Output.Register(f, gate.Formats)
	o.Traces.Register(f)
}

// Config checks the flags (fs says which were given) and returns the
// gate's configuration, with log for progress; every error is the
// caller's to fix (a usage error).
func (o *Flags) Config(fs *pflag.FlagSet, log io.Writer) (Config, error) {
	if o.Old == "" || o.New == "" {
		return Config{}, errors.New(`upgrade-gate needs --old IMAGE and --new IMAGE (a vLLM image, "sim" or "in-process")`)
	}
	if err := o.Output.Check(); err != nil {
		return Config{}, err
	}
	servers, err := ParseServers(o.Servers)
	if err != nil {
		return Config{}, err
	}
	base, err := SuiteSettings(fs, o.Size, o.Thresholds)
	if err != nil {
		return Config{}, err
	}
	traces, err := o.Traces.settings(fs)
	if err != nil {
		return Config{}, err
	}
	maxPairs := PairCap(fs, o.MaxPairs)
	dir := o.Results
	if dir == "" {
		dir = filepath.Join("results", "upgrade-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	return Config{
		Suite: base, Points: o.Points, MinPairs: o.MinPairs, MaxPairs: maxPairs, Servers: servers, Dir: dir, Log: log, TorchProfile: traces,
		Old: Side{Image: o.Old, SimArgs: strings.Fields(o.OldSim)},
		New: Side{Image: o.New, SimArgs: strings.Fields(o.NewSim)},
	}, nil
}

// SuiteSettings is the suite's configuration from the environment
// (suite.FromEnv), with the --size and --thresholds flags (fs says which
// were given) over it: the settings an upgrade gate, or each step of a
// bisection, runs its points with.
func SuiteSettings(fs *pflag.FlagSet, size, thresholdsPath string) (suite.Config, error) {
	base, err := suite.FromEnv(false)
	if err != nil {
		return base, err
	}
	if fs.Changed("size") {
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
func PairCap(fs *pflag.FlagSet, maxPairs int) int {
	if !fs.Changed("max-pairs") {
		return 0
	}
	return maxPairs
}

// Publish writes the result: the report on stdout in --format, the
// headline and the results folder after it, gate.txt and gate.json into
// the folder, the markdown report to the step summary. Its error is the
// gate's decision as the command's result: DIFFERENT fails (exit 1),
// UNKNOWN is inconclusive (exit 3).
func (o *Flags) Publish(res *Result, dir string, stdout, stderr io.Writer) error {
	if err := o.Output.Publish(res.Report, stdout, stderr, "vllmperf upgrade-gate", res.SummaryIntro(o.Old, o.New)); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nupgrade gate %s → %s: %s\n", o.Old, o.New, res.Headline())
	if line := res.ParityLine(); line != "" {
		fmt.Fprintln(stdout, line)
	}
	fmt.Fprintf(stdout, "results: %s\n", dir)
	if err := res.writeParity(filepath.Join(dir, ParityFile)); err != nil {
		return err
	}
	for name, format := range map[string]string{ReportText: "text", ReportJSON: "json"} {
		if err := res.Report.WriteFile(filepath.Join(dir, name), format); err != nil {
			return err
		}
	}
	if len(res.ParityFailures) > 0 {
		return fmt.Errorf("output parity: %s (%s)", strings.Join(res.ParityFailures, "; "), res.Headline())
	}
	switch res.Decision() {
	case gate.Different:
		return errors.New(res.Headline())
	case gate.Unknown:
		return exitstatus.Inconclusive(fmt.Sprintf("%s; raise --max-pairs (now %d) or thresholds.yaml's min_effect for the undecided metrics", res.Headline(), res.Pairs))
	}
	return nil
}
