package bisect

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/orchestrate/upgrade"
)

// Prediction is the bisection's cost, said before its first step.
type Prediction struct {
	// Builds is the candidates; Comparisons the most comparisons
	// without skips (MaxComparisons).
	Builds      int `json:"builds"`
	Comparisons int `json:"comparisons"`
	// Points is the scenario points each comparison runs; MinPairs and
	// MaxPairs the gate's pairs per comparison.
	Points             int `json:"points"`
	MinPairs, MaxPairs int `json:"-"`
	// Runs is the fewest and the most runs of the whole bisection, both
	// sides together.
	Runs [2]int `json:"runs"`
	// StepTime is one comparison's expected time, from the steps an
	// earlier bisection recorded in the same folder (0: unknown before
	// the first step ends); Time the bisection's at most, from it.
	StepTime time.Duration `json:"step_time_ns,omitempty"`
	Time     time.Duration `json:"time_ns,omitempty"`
	// Basis says where StepTime comes from.
	Basis string `json:"basis,omitempty"`
}

// String says the prediction in a line: "8 builds: at most 4 comparisons
// (…), 6–20 pairs of 1 point each: 48 to 160 runs; time: …".
func (p Prediction) String() string {
	s := fmt.Sprintf("%d builds: at most %d comparisons (binary search over the %d builds after the known-good one, plus the known-bad end's check when the search never compares it), %d to %d pairs of %s each: %d to %d runs",
		p.Builds, p.Comparisons, p.Builds-1, p.MinPairs, p.MaxPairs, plural(p.Points, "point"), p.Runs[0], p.Runs[1])
	if p.Time > 0 {
		return s + fmt.Sprintf("; time: at most about %s (%s a comparison, %s)", p.Time.Round(time.Second), p.StepTime.Round(time.Second), p.Basis)
	}
	return s + "; time: predicted after the first comparison (no earlier step in the results folder to time)"
}

// Predict says what cfg will cost before it starts: comparisons, runs
// and, when an earlier bisection left measured steps in cfg.Dir, time.
func Predict(cfg Config) Prediction {
	g := cfg.Gate
	minPairs, maxPairs := g.MinPairs, g.MaxPairs
	if minPairs == 0 {
		minPairs = upgrade.DefaultMinPairs
	}
	if maxPairs == 0 {
		maxPairs = max(upgrade.DefaultMaxPairs, minPairs)
	}
	points := 0
	if targets, err := upgrade.SelectPoints(catalog(g), g.Suite.Size, pointsOf(g)); err == nil {
		points = len(targets)
	}
	p := Prediction{Builds: len(cfg.Candidates), Comparisons: MaxComparisons(len(cfg.Candidates)), Points: points, MinPairs: minPairs, MaxPairs: maxPairs}
	// A comparison runs at least one round (MinPairs) and at most every
	// pair up to the cap; the known-bad end's check is one of them
	// only when needed, so the fewest comparisons is log2 alone.
	fewest := max(1, p.Comparisons-1)
	p.Runs = [2]int{2 * fewest * minPairs * points, 2 * p.Comparisons * maxPairs * points}
	if t, n := earlierStepTime(cfg.Dir); n > 0 {
		p.StepTime, p.Time = t, t*time.Duration(p.Comparisons)
		p.Basis = fmt.Sprintf("the mean of %d steps measured earlier in %s", n, cfg.Dir)
	}
	return p
}

func catalog(g upgrade.Config) upgrade.Catalog {
	if g.Catalog.Scenario == nil {
		return upgrade.Builtin()
	}
	return g.Catalog
}

func pointsOf(g upgrade.Config) []string {
	if g.Points == nil {
		return upgrade.DefaultPoints
	}
	return g.Points
}

// earlierStepTime is the mean time of the steps measured (not reused,
// not skipped) by earlier bisections in dir, and their count.
func earlierStepTime(dir string) (time.Duration, int) {
	if dir == "" {
		return 0, 0
	}
	files, _ := filepath.Glob(filepath.Join(dir, "line-*", StepFile))
	var sum time.Duration
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var st Step
		if json.Unmarshal(data, &st) != nil || st.Reused || st.Verdict == Skip || st.Elapsed <= 0 || !strings.HasPrefix(filepath.Base(filepath.Dir(f)), "line-") {
			continue
		}
		sum += st.Elapsed
		n++
	}
	if n == 0 {
		return 0, 0
	}
	return sum / time.Duration(n), n
}

// plural is "1 point" or "4 points".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
