package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot/plotter"

	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// ParetoPoint is one sweep point on the Pareto chart: what one user gets
// (output tokens/s per request in flight) against what the hardware gives
// (output tokens/s per GPU).
type ParetoPoint struct {
	Profile, Scenario string
	Concurrency       int
	PerUser, PerGPU   float64
}

// Name is "basic c=8", as the frontier's list writes it.
func (p ParetoPoint) Name() string { return fmt.Sprintf("%s c=%d", p.Profile, p.Concurrency) }

// paretoPoints are every sweep point with a tok/s: per user tok/s ÷
// concurrency, per GPU tok/s ÷ the profile's GPUs (1 when the folder does
// not say, and unknown then names those profiles).
func (r *Report) paretoPoints() (pts [][]ParetoPoint, unknown []string) {
	gpus := map[string]int{}
	for _, p := range r.Profiles {
		gpus[p.Name] = p.GPUs
	}
	for _, sw := range r.Sweeps {
		n := gpus[sw.Profile]
		if n <= 0 {
			n = 1
			if !slices.Contains(unknown, sw.Profile) {
				unknown = append(unknown, sw.Profile)
			}
		}
		var line []ParetoPoint
		for _, p := range sw.Points {
			tokS := p.Value(units.TokPerSec)
			if math.IsNaN(tokS) || p.Concurrency <= 0 {
				continue
			}
			line = append(line, ParetoPoint{Profile: sw.Profile, Scenario: sw.Scenario, Concurrency: p.Concurrency,
				PerUser: tokS / float64(p.Concurrency), PerGPU: tokS / float64(n)})
		}
		pts = append(pts, line)
	}
	return pts, unknown
}

// ParetoFrontier are the points no other point beats on both axes (more
// tokens/s per GPU and per user), by tokens/s per GPU.
func ParetoFrontier(lines [][]ParetoPoint) []ParetoPoint {
	var all []ParetoPoint
	for _, l := range lines {
		all = append(all, l...)
	}
	// From the most tokens/s per GPU down, a point is on the frontier when
	// it gives each user more than every point to its right.
	slices.SortStableFunc(all, func(a, b ParetoPoint) int {
		if a.PerGPU != b.PerGPU {
			return cmp.Compare(b.PerGPU, a.PerGPU)
		}
		return cmp.Compare(b.PerUser, a.PerUser)
	})
	var out []ParetoPoint
	best := math.Inf(-1)
	for _, p := range all {
		if p.PerUser > best {
			out = append(out, p)
			best = p.PerUser
		}
	}
	slices.Reverse(out)
	return out
}

// paretoColumns is the frontier as a table (report.md, where the HTML has
// the chart).
var paretoColumns = []column[ParetoPoint]{
	plainCol("point", func(p ParetoPoint) string { return p.Name() }),
	numCol("output tok/s per GPU", func(p ParetoPoint) string { return fmt.Sprintf("%.1f", p.PerGPU) }),
	numCol("output tok/s per user", func(p ParetoPoint) string { return fmt.Sprintf("%.1f", p.PerUser) }),
}

// frontierTable is the Pareto frontier over the report's sweeps.
func (r *Report) frontierTable() table {
	lines, _ := r.paretoPoints()
	return makeTable(paretoColumns, ParetoFrontier(lines), nil)
}

// paretoChart: output tokens/s per user against output tokens/s per GPU,
// one line per sweep (its concurrencies), the frontier dashed.
func (r *Report) paretoChart() (Chart, error) {
	lines, unknown := r.paretoPoints()
	b := newChart("pareto", "Tokens/s per user against tokens/s per GPU", "output tokens/s per GPU", "output tokens/s per user")
	for i, l := range lines {
		var xys plotter.XYs
		for _, p := range l {
			xys = append(xys, plotter.XY{X: p.PerGPU, Y: p.PerUser})
		}
		b.series(sweepName(r.Sweeps[i], r.Sweeps), i, xys, look{marks: true})
	}
	front := ParetoFrontier(lines)
	if len(front) > 1 {
		var xys plotter.XYs
		for _, p := range front {
			xys = append(xys, plotter.XY{X: p.PerGPU, Y: p.PerUser})
		}
		b.mark(xys, "Pareto frontier")
	}
	b.p.X.Min, b.p.Y.Min = 0, 0
	b.caption = "From summary.json: each sweep point's output tokens/s divided by its GPUs (x) and by its requests in flight (y); up and to the right is better, and the dashed line joins the points no other beats on both."
	if len(unknown) > 0 {
		b.caption += fmt.Sprintf(" The folder does not say how many GPUs %s used: counted as 1.", strings.Join(unknown, ", "))
	}
	return b.render()
}
