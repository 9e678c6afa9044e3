// Package bisect finds the first bad build in an ordered list of vLLM
// builds (ReadCandidates): the first known good, the last known bad, as
// `git bisect` does for commits. Each step is the upgrade gate (package
// upgrade) with the known-good build as OLD and a midpoint as NEW, run
// interleaved with the gate's settings (points, size, pairs, lifecycle,
// thresholds): DIFFERENT makes the midpoint bad, SAME good, and UNKNOWN
// at the gate's pair cap, or a build that does not start, skips it (as
// `git bisect skip`): the next step takes the untested build nearest to
// the middle instead.
//
// The known-bad end is compared only when the search never compared it
// (every midpoint was good, or skipped): n builds take at most
// ceil(log2(n-1)) comparisons, plus that one. Every step writes its
// gate's bench files and step.json to its own folder of Config.Dir; a
// bisection started again on the same folder compares a finished step's
// runs again under today's thresholds instead of measuring them again.
package bisect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/orchestrate/upgrade"
	"github.com/vllmperf/vllmperf/internal/outfile"
	"github.com/vllmperf/vllmperf/internal/target/server"
)

// Verdict is what a step made of its build.
type Verdict string

// The verdicts.
const (
	// Good: SAME as the known-good build.
	Good Verdict = "good"
	// Bad: DIFFERENT (worse) than the known-good build.
	Bad Verdict = "bad"
	// Skip: UNKNOWN at the pair cap, or the build did not start or run.
	Skip Verdict = "skip"
)

// StepFile is the file each step's folder gets: the step's record.
const StepFile = "step.json"

// Config is what Run needs.
type Config struct {
	// Gate is the upgrade gate's configuration of every step: Suite,
	// Points, Catalog, MinPairs, MaxPairs, Servers, Log. Old, New and
	// Dir are set per step.
	Gate upgrade.Config
	// Candidates are the builds, in order (ReadCandidates).
	Candidates []Candidate
	// Dir receives a folder per step and bisect.json.
	Dir string
	// Log receives progress lines (nil: none).
	Log io.Writer

	// compare replaces upgrade.Run in tests.
	compare func(context.Context, upgrade.Config) (outcome, error)
}

// outcome is what a step takes from the upgrade gate's result.
type outcome struct {
	decision         gate.Decision
	headline, parity string
	pairs, starts    int
}

// runGate is the upgrade gate, as a step's comparison.
func runGate(ctx context.Context, cfg upgrade.Config) (outcome, error) {
	res, err := upgrade.Run(ctx, cfg)
	if err != nil {
		return outcome{}, err
	}
	return outcome{decision: res.Decision(), headline: res.Headline(), parity: res.ParityLine(), pairs: res.Pairs, starts: res.Starts}, nil
}

// Step is one comparison of the bisection.
type Step struct {
	// N is the step's number (1-based) and Candidate the build compared
	// with the known-good one (Index in Config.Candidates).
	N         int       `json:"step"`
	Index     int       `json:"index"`
	Candidate Candidate `json:"-"`
	Line      int       `json:"line"`
	Build     string    `json:"build"`
	Good      string    `json:"good"`
	// Verdict is what the step made of the build; Decision the gate's.
	Verdict  Verdict `json:"verdict"`
	Decision string  `json:"decision,omitempty"`
	// Headline is the gate's ("DIFFERENT after 6 pairs: FAIL: …"), or
	// why the build was skipped.
	Headline string `json:"headline"`
	// Parity is the gate's output parity line ("" without one).
	Parity string `json:"parity,omitempty"`
	// Pairs and Starts are the gate's.
	Pairs  int `json:"pairs,omitempty"`
	Starts int `json:"starts,omitempty"`
	// Dir is the step's folder, relative to Config.Dir.
	Dir string `json:"dir"`
	// Elapsed is the step's time; Reused says its runs were measured by
	// an earlier bisection on the same folder and only compared again.
	Elapsed time.Duration `json:"elapsed_ns"`
	Reused  bool          `json:"reused,omitempty"`
}

// Result is what the bisection found.
type Result struct {
	// Candidates are the builds bisected.
	Candidates []Candidate `json:"-"`
	// Steps are the comparisons, in order.
	Steps []Step `json:"steps"`
	// FirstBad is the index of the first bad build; -1 when none was
	// found (see Range and Reason).
	FirstBad int `json:"first_bad"`
	// Range is the indexes [lo, hi] the first bad build lies in: one
	// build when found, several when the builds between were skipped.
	Range [2]int `json:"range"`
	// Reason says why no first bad build was named ("" when found).
	Reason string `json:"reason,omitempty"`
	// Prediction is what was predicted before the first step.
	Prediction Prediction `json:"prediction"`
	// Elapsed is the whole bisection's time.
	Elapsed time.Duration `json:"elapsed_ns"`
}

// Found reports whether the first bad build was named.
func (r *Result) Found() bool { return r.FirstBad >= 0 }

// Headline says what was found: "first bad build: line 5 (sim
// --sim-slowdown 1.25), after 3 comparisons in 41s".
func (r *Result) Headline() string {
	took := fmt.Sprintf("after %s in %s", plural(len(r.Steps), "comparison"), r.Elapsed.Round(time.Second))
	if r.Found() {
		return fmt.Sprintf("first bad build: %s, %s", r.Candidates[r.FirstBad].Name(), took)
	}
	return fmt.Sprintf("no first bad build named, %s: %s", took, r.Reason)
}

// MaxComparisons is the most comparisons n builds take without skips:
// a binary search over the n-1 builds after the known-good one, plus the
// check of the known-bad end.
func MaxComparisons(n int) int {
	if n < 2 {
		return 0
	}
	return int(math.Ceil(math.Log2(float64(n-1)))) + 1
}

// Run bisects the candidates. Its error is about the settings (wrapping
// upgrade.ErrSettings or ErrCandidates), the comparison's input (a
// *gate.MismatchError: two builds on different GPUs or models) or the
// context; a build that fails to start or to run is a skipped step, not
// an error.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if len(cfg.Candidates) < 2 {
		return nil, fmt.Errorf("%w: %d builds: give at least 2, the known-good first and the known-bad last", ErrCandidates, len(cfg.Candidates))
	}
	if cfg.Dir == "" {
		return nil, fmt.Errorf("%w: no results folder", upgrade.ErrSettings)
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.compare == nil {
		cfg.compare = runGate
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("bisect: %w", err)
	}
	b := &bisection{cfg: cfg, verdicts: map[int]Verdict{}, start: time.Now()}
	b.res = &Result{Candidates: cfg.Candidates, FirstBad: -1, Prediction: Predict(cfg)}
	fmt.Fprintf(cfg.Log, "bisect: %s\n", b.res.Prediction)
	err := b.search(ctx)
	b.res.Elapsed = time.Since(b.start)
	if err != nil {
		return nil, err
	}
	return b.res, writeJSON(filepath.Join(cfg.Dir, ResultFile), b.res)
}

// ResultFile is the bisection's record in Config.Dir.
const ResultFile = "bisect.json"

type bisection struct {
	cfg      Config
	res      *Result
	verdicts map[int]Verdict
	start    time.Time
}

// search is the binary search: good and bad bound the first bad build
// (good < first bad <= bad), the untested build nearest their middle is
// compared next, skips are stepped around.
func (b *bisection) search(ctx context.Context) error {
	n := len(b.cfg.Candidates)
	good, bad := 0, n-1
	for {
		mid, ok := b.next(good, bad)
		if !ok {
			break
		}
		v, err := b.step(ctx, mid)
		if err != nil {
			return err
		}
		switch v {
		case Bad:
			bad = mid
		case Good:
			good = mid
		}
	}
	if bad == n-1 {
		// The search never found a bad build: the known-bad end decides
		// whether there is one to find.
		v, err := b.step(ctx, n-1)
		if err != nil {
			return err
		}
		switch v {
		case Good:
			b.res.Range = [2]int{n - 1, n - 1}
			b.res.Reason = fmt.Sprintf("the known-bad build %s is not worse than the known-good %s: nothing to bisect (check the points and thresholds, or the order of the file)",
				b.cfg.Candidates[n-1].Name(), b.cfg.Candidates[0].Name())
			return nil
		case Skip:
			b.res.Range = [2]int{good + 1, n - 1}
			b.res.Reason = fmt.Sprintf("the known-bad build %s could not be confirmed bad (skipped): the first bad build is %s, if any",
				b.cfg.Candidates[n-1].Name(), b.rangeWords(good+1, n-1))
			return nil
		}
	}
	b.res.Range = [2]int{good + 1, bad}
	if good+1 == bad {
		b.res.FirstBad = bad
		return nil
	}
	b.res.Reason = fmt.Sprintf("the builds between the last good %s and the first bad %s were skipped: the first bad build is %s",
		b.cfg.Candidates[good].Name(), b.cfg.Candidates[bad].Name(), b.rangeWords(good+1, bad))
	return nil
}

// next is the untested build strictly between good and bad nearest to
// their middle (the lower one first), if any.
func (b *bisection) next(good, bad int) (int, bool) {
	mid := (good + bad) / 2
	for d := 0; mid-d > good || mid+d+1 < bad; d++ {
		for _, i := range []int{mid - d, mid + d + 1} {
			if i > good && i < bad {
				if _, tested := b.verdicts[i]; !tested {
					return i, true
				}
			}
		}
	}
	return 0, false
}

func (b *bisection) rangeWords(lo, hi int) string {
	c := b.cfg.Candidates
	if lo == hi {
		return c[lo].Name()
	}
	return fmt.Sprintf("one of lines %d to %d (%s … %s)", c[lo].Line, c[hi].Line, c[lo].Text, c[hi].Text)
}

// step compares build i with the known-good build, or takes the
// comparison of an earlier bisection on the same folder.
func (b *bisection) step(ctx context.Context, i int) (Verdict, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	c, good := b.cfg.Candidates[i], b.cfg.Candidates[0]
	st := Step{N: len(b.res.Steps) + 1, Index: i, Candidate: c, Line: c.Line, Build: c.Text, Good: good.Text}
	fmt.Fprintf(b.cfg.Log, "bisect: step %d: %s against the known-good %s\n", st.N, c.Name(), good.Name())
	start := time.Now()
	dir, reused, err := b.stepDir(st)
	if err != nil {
		return "", err
	}
	st.Dir = filepath.Base(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("bisect: %w", err)
	}
	if reused != nil {
		st.Reused = true
		st.Verdict, st.Decision, st.Headline = verdictOf(reused.Decision()), string(reused.Decision()), reused.Headline()
	} else {
		gc := b.cfg.Gate
		gc.Old, gc.New, gc.Dir = good.Side, c.Side, dir
		res, err := b.cfg.compare(ctx, gc)
		var merr *input.MismatchError
		var serr *upgrade.StartError
		switch {
		case ctx.Err() != nil:
			return "", ctx.Err()
		case errors.Is(err, upgrade.ErrSettings), errors.Is(err, server.ErrSettings), errors.As(err, &merr):
			return "", fmt.Errorf("step %d, %s: %w", st.N, c.Name(), err)
		case errors.As(err, &serr) && serr.Side == "OLD":
			return "", fmt.Errorf("step %d: the known-good build %s did not start, so no build can be compared with it: %w", st.N, good.Name(), err)
		case err != nil:
			st.Verdict, st.Headline = Skip, "skipped: "+oneLine(err.Error())
		default:
			st.Verdict, st.Decision, st.Headline = verdictOf(res.decision), string(res.decision), res.headline
			st.Parity, st.Pairs, st.Starts = res.parity, res.pairs, res.starts
			if st.Verdict == Skip {
				st.Headline = "skipped: still UNKNOWN at the pair cap: " + st.Headline
			}
		}
	}
	st.Elapsed = time.Since(start)
	b.verdicts[i] = st.Verdict
	b.res.Steps = append(b.res.Steps, st)
	if err := writeJSON(filepath.Join(dir, StepFile), st); err != nil {
		return "", err
	}
	fmt.Fprintf(b.cfg.Log, "bisect: step %d: %s is %s (%s; %s)\n", st.N, c.Name(), strings.ToUpper(string(st.Verdict)), st.Headline, st.Elapsed.Round(time.Millisecond))
	if left := b.res.Prediction.Comparisons - st.N; left > 0 {
		fmt.Fprintf(b.cfg.Log, "bisect: at most %s left: about %s more at this pace\n", plural(left, "comparison"), (time.Since(b.start) / time.Duration(st.N) * time.Duration(left)).Round(time.Second))
	}
	return st.Verdict, nil
}

func verdictOf(d gate.Decision) Verdict {
	switch d {
	case gate.Different:
		return Bad
	case gate.Same:
		return Good
	}
	return Skip
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// stepDir is the folder of a step: line-N-vs-line-G, or, when a folder
// of that name holds an earlier comparison of the same two builds whose
// bench files decide under today's thresholds, that comparison (reused).
// A folder holding something else gets a fresh name (-2, -3, …), so that
// two comparisons' runs never mix.
func (b *bisection) stepDir(st Step) (string, *gate.Report, error) {
	base := filepath.Join(b.cfg.Dir, fmt.Sprintf("line-%d-vs-line-%d", st.Line, b.cfg.Candidates[0].Line))
	for k := 1; ; k++ {
		dir := base
		if k > 1 {
			dir = fmt.Sprintf("%s-%d", base, k)
		}
		if _, err := os.Stat(filepath.Join(dir, upgrade.OldFile)); errors.Is(err, os.ErrNotExist) {
			return dir, nil, nil
		}
		if rep := b.earlier(dir, st); rep != nil {
			return dir, rep, nil
		}
	}
}

// earlier is the comparison an earlier bisection left in dir, when it
// compared the same builds and its runs decide (SAME or DIFFERENT) under
// today's thresholds; nil otherwise.
func (b *bisection) earlier(dir string, st Step) *gate.Report {
	data, err := os.ReadFile(filepath.Join(dir, StepFile))
	if err != nil {
		return nil
	}
	var prev Step
	if json.Unmarshal(data, &prev) != nil || prev.Build != st.Build || prev.Good != st.Good || prev.Verdict == Skip {
		return nil
	}
	old, err := input.ReadFile(filepath.Join(dir, upgrade.OldFile))
	if err != nil {
		return nil
	}
	nw, err := input.ReadFile(filepath.Join(dir, upgrade.NewFile))
	if err != nil {
		return nil
	}
	rep, err := gate.Compare(old, nw, b.cfg.Gate.Suite.Thresholds, gate.Options{ConfigKeys: upgrade.ConfigKeys, OwnStarts: true, Interleaved: true})
	if err != nil || rep.Decision() == gate.Unknown {
		return nil
	}
	fmt.Fprintf(b.cfg.Log, "bisect: step %d: reusing the runs in %s (compared again)\n", st.N, dir)
	return rep
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return outfile.ReplaceBytes(path, 0o644, append(data, '\n'))
}
