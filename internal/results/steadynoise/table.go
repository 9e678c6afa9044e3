package steadynoise

import (
	"fmt"
	"math"
	"strings"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
)

// Size is one size's data: its name, cells and the steady file's
// fallbacks.
type Size struct {
	Name  string
	Cells []Cell
	// Runs counts the steady file's benchmark lines; Fallbacks lists, by
	// point in file order, its lines that carry a whole run's figure.
	Runs      int
	Fallbacks []Fallback
}

// Fallback is a point some of whose runs carry whole-run figures in the
// steady file: how many, and the first one's reason.
type Fallback struct {
	Point string
	Runs  int
	Why   string
}

// ReadSize reads a size's two files (Write's) and computes its cells.
func ReadSize(name, wholePath, steadyPath string) (*Size, error) {
	whole, err := input.ReadFile(wholePath)
	if err != nil {
		return nil, err
	}
	steady, err := input.ReadFile(steadyPath)
	if err != nil {
		return nil, err
	}
	cells, err := Compare(whole, steady)
	if err != nil {
		return nil, err
	}
	s := &Size{Name: name, Cells: cells, Runs: len(steady.Results)}
	at := map[string]int{}
	for _, r := range steady.Results {
		w := r.GetConfig(WindowKey)
		if w == "" {
			return nil, fmt.Errorf("steadynoise: %s: a line without its %q configuration: not a file Write made", steadyPath, WindowKey)
		}
		if w == WindowSteady {
			continue
		}
		point := strings.TrimPrefix(string(r.Name.Full()), benchname.Bench+"/")
		i, ok := at[point]
		if !ok {
			i = len(s.Fallbacks)
			at[point] = i
			s.Fallbacks = append(s.Fallbacks, Fallback{Point: point, Why: strings.TrimPrefix(w, WindowWhole+": ")})
		}
		s.Fallbacks[i].Runs++
	}
	return s, nil
}

// Verdict is the rule's outcome at this size.
func (s *Size) Verdict() Verdict {
	rs := make([]float64, len(s.Cells))
	for i, c := range s.Cells {
		rs[i] = c.Ratio()
	}
	return Decide(rs)
}

// Table is the figure of docs/load-shapes.md: per size, each cell's
// effects and ratio, the fallbacks and the rule's outcome; then the
// verdict over the sizes.
func Table(sizes []*Size) string {
	var b strings.Builder
	var vs []Verdict
	for _, s := range sizes {
		fallbacks := 0
		for _, f := range s.Fallbacks {
			fallbacks += f.Runs
		}
		fmt.Fprintf(&b, "\n**%s** (%d runs; steady window unavailable: %d of %d runs)\n\n", s.Name, s.Runs, fallbacks, s.Runs)
		b.WriteString("| profile | unit | whole: runs alone | steady: runs alone | ratio | whole: one start a side | steady: one start a side |\n")
		b.WriteString("|---|---|--:|--:|--:|--:|--:|\n")
		for _, c := range s.Cells {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", gate.ProfileName(c.Profile), c.Unit,
				gate.FormatMDE(c.Whole.Within(Count)), gate.FormatMDE(c.Steady.Within(Count)), formatRatio(c.Ratio()),
				gate.FormatMDE(c.Whole.At(Count)), gate.FormatMDE(c.Steady.At(Count)))
		}
		if len(s.Fallbacks) > 0 {
			b.WriteString("\nRuns that carry the whole run's figures in the steady file (no steady window, or one without the unit):\n\n")
			for _, f := range s.Fallbacks {
				fmt.Fprintf(&b, "- `%s`: %d runs (%s)\n", f.Point, f.Runs, f.Why)
			}
		}
		v := s.Verdict()
		vs = append(vs, v)
		word := "the steady window does not win"
		if v.Wins {
			word = "the steady window wins"
		}
		fmt.Fprintf(&b, "\n%s: ratio below 1 in %d of %d cells (needs %d), median ratio %s (needs ≤ %.2f), largest %s (needs ≤ %.2f): %s.\n",
			s.Name, v.Smaller, v.Cells, v.Need, formatRatio(v.Median), MaxMedian, formatRatio(v.Max), MaxRatio, word)
	}
	if Adopt(vs) {
		b.WriteString("\n**Verdict: ADOPT** the steady window for the gate (it wins at every size).\n")
	} else {
		b.WriteString("\n**Verdict: KEEP the whole run's figures** (the steady window does not win at every size); `metrics_window` stays \"whole run\".\n")
	}
	fmt.Fprintf(&b, "\nEffects: `gate.MinimumEffects` at %d runs a side with the shipped thresholds; \"runs alone\" is `MDE.Within(%d)` (the rule's figure), \"one start a side\" `MDE.At(%d)` (with the shipped start_spread, reported only); ratio = steady / whole of the runs alone.", Count, Count, Count)
	return b.String()
}

// formatRatio writes a ratio to two decimals, "∞" when infinite and "—"
// when there is none.
func formatRatio(r float64) string {
	switch {
	case math.IsNaN(r):
		return "—"
	case math.IsInf(r, 1):
		return "∞"
	}
	return fmt.Sprintf("%.2f", r)
}
