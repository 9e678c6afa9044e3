// Package historycli is `vllmperf history`: its flags and what each subcommand
// does (docs/history.md), so that cmd/vllmperf only mounts it and maps its
// errors to exit statuses: history.ErrBadInput is bad input (2), an
// exitstatus.InconclusiveError is exit 3, any other error exit 1.
package historycli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vllmperf/vllmperf/cmd/vllmperf/internal/cliflags"
	"github.com/vllmperf/vllmperf/internal/results/history"
	"github.com/vllmperf/vllmperf/internal/results/report"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// EnvHistory names the default history store.
var EnvHistory = envvar.History.Name

// GitHub Actions' own variables, the defaults of --commit and --ref (not
// ours: package envvar declares vllmperf's settings only).
const (
	envGHSHA = "GITHUB_SHA"
	envGHRef = "GITHUB_REF_NAME"
)

// Thresholds loads the thresholds file given ("" for the default one):
// the caller's, so that every command reads thresholds.yaml alike.
type Thresholds func(path string) (*thresholds.Set, error)

// historyFlags are the flags the history subcommands share.
type historyFlags struct {
	store, key, since, until, thresholds, showFormat, out, commit, ref, date, baseline string
	bench, units, notes                                                                []string
	last, maxBench                                                                     int
	check                                                                              history.CheckOptions
	output                                                                             verdict.Output
	load                                                                               Thresholds
}

// New is the `history` command with its subcommands add, show, check and
// report; load reads --thresholds.
func New(stdout, stderr io.Writer, load Thresholds) *cobra.Command {
	o := &historyFlags{store: os.Getenv(EnvHistory), check: history.DefaultCheck, load: load}
	if o.store == "" {
		o.store = "history"
	}
	root := &cobra.Command{Use: "history", Short: "Keep every run and find the slow drifts no single gate catches: add, show, check, report",
		Long: "history keeps every run of the suite in a store (a folder of runs/<id>/run.json and bench.txt, kept on a\nbranch or in a cache), lists and exports it, finds change points across the runs (E-divisive means with a\npermutation test, Benjamini-Hochberg over every series) and draws the trends. See docs/history.md.\n\nhistory check's exit status: 0 no regression, 1 a change point in the bad direction, 2 bad input, 3 nothing could be tested."}
	root.PersistentFlags().StringVar(&o.store, "store", o.store, "the history store folder (default $"+EnvHistory+", else ./history)")
	sub := func(use, short string, args cobra.PositionalArgs, run func([]string) error) *cobra.Command {
		c := &cobra.Command{Use: use, Short: short, Args: args, RunE: func(_ *cobra.Command, a []string) error { return run(a) }}
		root.AddCommand(c)
		return c
	}
	add := sub("add RESULTS_DIR", "Add a results folder's run (bench.txt, summary.json's checks) to the store", exactArgs(1, "the results folder (or a bench file)"), func(a []string) error { return runHistoryAdd(o, a[0], stdout) })
	f := add.Flags()
	f.StringVar(&o.commit, "commit", os.Getenv(envGHSHA), "the commit measured (default $GITHUB_SHA, else git rev-parse HEAD)")
	f.StringVar(&o.ref, "ref", os.Getenv(envGHRef), "the branch or tag (default $GITHUB_REF_NAME)")
	f.StringVar(&o.date, "date", "", "when the run was measured, RFC 3339 (default: summary.json's first run, else now)")
	f.StringVar(&o.baseline, "baseline", "", "the baseline the run was gated against: a new digest marks a re-baseline")
	f.StringArrayVar(&o.notes, "event", nil, "a known event to mark at this run (repeatable), e.g. 'driver 550 → 560'")
	show := sub("show", "List the store's runs, or export their values (--format csv|json)", cobra.NoArgs, func([]string) error { return runHistoryShow(o, stdout) })
	check := sub("check", "Find change points in every gated unit's series; exit 1 on one in the bad direction", cobra.NoArgs, func([]string) error { return runHistoryCheck(o, stdout, stderr) })
	reportCmd := sub("report", "Write history.html: the trends of the headline units with the change points and events marked", cobra.NoArgs, func([]string) error { return runHistoryReport(o, stdout) })
	for _, c := range []*cobra.Command{show, check, reportCmd} {
		f := c.Flags()
		f.StringVar(&o.key, "key", "", "keep runs with these configuration lines, e.g. gpu=sim:rtx4090-seed,size=quick")
		f.StringSliceVar(&o.bench, "bench", nil, "keep these benchmarks (run names, globs per element, e.g. profile=basic/scenario=ttft-tpot)")
		f.StringVar(&o.since, "since", "", "keep runs from this run ID or UTC date/time on")
		f.StringVar(&o.until, "until", "", "keep runs up to this run ID or UTC date/time")
		f.IntVar(&o.last, "last", 0, "keep only the newest N runs of each key")
		if c != show {
			f.StringSliceVar(&o.units, "unit", nil, "keep these units only (default all)")
			f.StringVar(&o.thresholds, "thresholds", "", "thresholds.yaml for the units' directions (default ./thresholds.yaml if present)")
			f.Float64Var(&o.check.Alpha, "alpha", o.check.Alpha, "false discovery rate over all series tested (Benjamini-Hochberg)")
			f.Float64Var(&o.check.MinChange, "min-change", o.check.MinChange, "smallest relative change reported (0.02 = 2%)")
			f.IntVar(&o.check.MinSize, "min-size", o.check.MinSize, "fewest runs on each side of a change")
			f.IntVar(&o.check.Permutations, "permutations", 0, "most permutations per test (0: automatic, max(999, 2·series/alpha − 1))")
			f.Uint64Var(&o.check.Seed, "seed", o.check.Seed, "seed of the permutations")
		}
	}
	show.Flags().StringVar(&o.showFormat, "format", "table", "table, csv or json")
	cliflags.Output(check.Flags(), &o.output, history.CheckFormats)
	reportCmd.Flags().StringVar(&o.out, "out", ".", "the folder to write history.html into")
	reportCmd.Flags().IntVar(&o.maxBench, "max-benchmarks", report.DefaultMaxBenchmarks, "most benchmarks drawn per key (those with a change point first)")
	return root
}

func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return fmt.Errorf("%w: want %d argument, %s (got %d)", history.ErrBadInput, n, what, len(args))
		}
		return nil
	}
}

func runHistoryAdd(o *historyFlags, src string, stdout io.Writer) error {
	a := history.AddOptions{Commit: o.commit, Ref: o.ref, Baseline: o.baseline, Notes: o.notes}
	var err error
	if a.Commit == "" {
		if a.Commit, err = history.GitHead(); err != nil {
			return err
		}
	}
	if o.date != "" {
		if a.Date, err = time.Parse(time.RFC3339, o.date); err != nil {
			return fmt.Errorf("%w: --date %q: want RFC 3339, e.g. 2026-12-03T14:00:00Z", history.ErrBadInput, o.date)
		}
	}
	s, err := history.Init(o.store)
	if err != nil {
		return err
	}
	r, err := s.Add(src, a)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "added %s to %s: %s, %d benchmarks, %d values, checks %s\n", r.ID, o.store, r.Key, r.Record.Benchmarks, r.Values, r.Checks)
	return nil
}

func (o *historyFlags) options() (report.HistoryOptions, error) {
	key, err := history.ParseKey(o.key)
	if err != nil {
		return report.HistoryOptions{}, err
	}
	h := report.HistoryOptions{Filter: history.Filter{Key: key, Benchmarks: o.bench, Units: o.units, Since: o.since, Until: o.until, Last: o.last},
		Check: o.check, MaxBenchmarks: o.maxBench}
	if h.Thresholds, err = o.load(o.thresholds); err != nil {
		return h, fmt.Errorf("%w: %w", history.ErrBadInput, err)
	}
	return h, nil
}

func runHistoryShow(o *historyFlags, stdout io.Writer) error {
	h, err := o.options()
	if err != nil {
		return err
	}
	s, err := history.Open(o.store)
	if err != nil {
		return err
	}
	runs, err := s.Runs()
	if err != nil {
		return err
	}
	khs, err := history.Group(runs, h.Filter, h.Thresholds)
	if err != nil {
		return err
	}
	return history.Show(stdout, khs, o.showFormat)
}

func runHistoryCheck(o *historyFlags, stdout, stderr io.Writer) error {
	h, err := o.options()
	if err != nil {
		return err
	}
	if err := o.output.Check(); err != nil {
		return fmt.Errorf("%w: %w", history.ErrBadInput, err)
	}
	_, rep, err := report.CheckStore(o.store, h)
	if err != nil {
		return err
	}
	if err := o.output.Publish(rep, stdout, stderr, "vllmperf history check", ""); err != nil {
		return err
	}
	return verdict.ExitError(rep, strings.TrimPrefix(rep.Headline(), string(verdict.OutcomeInconclusive)+": "))
}

func runHistoryReport(o *historyFlags, stdout io.Writer) error {
	h, err := o.options()
	if err != nil {
		return err
	}
	page, err := report.LoadHistory(o.store, h)
	if err != nil {
		return err
	}
	path, err := report.WriteHistory(o.out, page)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\nwrote %s\n", page.Check.Headline(), path)
	return nil
}
