package startspread

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/aclements/go-moremath/stats"
	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/gatemath"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// SpreadEstimate is a server start's spread measured from recordings of
// the suite, each on its own start (docs/gate.md, "One server start a
// side"): per point and headline metric, the variance across recordings
// of the mean log value, less what the runs' own spread explains (the
// mean over recordings of the within-recording variance over its runs);
// pooled (averaged, unclipped, so that it is unbiased) over the cells.
type SpreadEstimate struct {
	// Files is the number of recordings; Cells the point × metric cells
	// measured in all of them.
	Files, Cells int
	// Pooled is the pooled variance (log scale; ≤ 0 when the recordings
	// differ no more than their runs explain), Spread √max(0, Pooled):
	// the value for start_spread.
	Pooled, Spread float64
	// Profiles are the same per profile, in the first file's order.
	Profiles []ProfileSpread
	// Units are the same per judged metric, the tails included, each
	// with an upper bound (units.go).
	Units []UnitSpread
}

// ProfileSpread is a SpreadEstimate of one profile.
type ProfileSpread struct {
	Profile        string
	Cells          int
	Pooled, Spread float64
}

// EstimateStartSpread measures the start spread from two or more
// recordings of the suite (bench files, each recorded on its own server
// start: baselines of one key recorded on different days, or runs of a
// history store). Only the headline metrics of points every file has,
// with at least 2 positive runs in each, count.
func EstimateStartSpread(files []*input.Input) (*SpreadEstimate, error) {
	if len(files) < 2 {
		return nil, fmt.Errorf("estimating the start spread needs at least two recordings of the suite, each on its own server start: got %d", len(files))
	}
	g, err := input.NewGrouping()
	if err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	sides := make([]*input.Side, len(files))
	for i, f := range files {
		sides[i] = g.Group(f, nil)
	}
	est := &SpreadEstimate{Files: len(files)}
	sums := map[string]*ProfileSpread{}
	for _, k := range sides[0].Order {
		first := sides[0].Benches[k]
		for _, u := range first.Units {
			if !units.Headline(u) {
				continue
			}
			means, within := make([]float64, 0, len(sides)), 0.0
			for _, s := range sides {
				b, ok := s.Benches[k]
				if !ok || len(b.Values[u]) < 2 || !gatemath.AllPositive(b.Values[u]) {
					break
				}
				logs := make([]float64, len(b.Values[u]))
				for i, v := range b.Values[u] {
					logs[i] = math.Log(v)
				}
				means = append(means, stats.Mean(logs))
				within += stats.Variance(logs) / float64(len(logs)) / float64(len(sides))
			}
			if len(means) < len(sides) {
				continue
			}
			cell := stats.Variance(means) - within
			p, ok := sums[first.Profile]
			if !ok {
				p = &ProfileSpread{Profile: first.Profile}
				sums[first.Profile] = p
				est.Profiles = append(est.Profiles, ProfileSpread{Profile: first.Profile})
			}
			p.Cells++
			p.Pooled += cell
			est.Cells++
			est.Pooled += cell
		}
	}
	if est.Cells == 0 {
		return nil, errors.New("no headline metric of a point is in every recording with at least 2 positive runs: give recordings of the same suite, recorded with -count 2 or more")
	}
	est.Pooled /= float64(est.Cells)
	est.Spread = math.Sqrt(max(0, est.Pooled))
	est.Units = unitSpreads(sides)
	for i := range est.Profiles {
		p := sums[est.Profiles[i].Profile]
		p.Pooled /= float64(p.Cells)
		p.Spread = math.Sqrt(max(0, p.Pooled))
		est.Profiles[i] = *p
	}
	return est, nil
}

// String says the estimate as `vllmperf start-spread` prints it.
func (e *SpreadEstimate) String() string {
	var b strings.Builder
	if e.Pooled > 0 {
		fmt.Fprintf(&b, "start spread: %.2f%% (sd of one server start's effect, log scale; from %d recordings, %d point × headline-metric cells; the estimate: thresholds.yaml's start_spread is recommended below at its upper bound; docs/gate.md, \"One server start a side\")\n",
			100*e.Spread, e.Files, e.Cells)
	} else {
		fmt.Fprintf(&b, "start spread: none detectable (from %d recordings, %d point × headline-metric cells, the recordings' means differ no more than their runs explain): a start_spread of 0%% reads the runs as independent; with few recordings, keep a cautious one\n",
			e.Files, e.Cells)
	}
	parts := make([]string, 0, len(e.Profiles))
	for _, p := range slices.Clone(e.Profiles) {
		s := "none detectable"
		if p.Pooled > 0 {
			s = fmt.Sprintf("%.2f%%", 100*p.Spread)
		}
		parts = append(parts, fmt.Sprintf("%s %s (%d cells)", gate.ProfileName(p.Profile), s, p.Cells))
	}
	fmt.Fprintf(&b, "  per profile: %s\n", strings.Join(parts, ", "))
	b.WriteString(e.unitsWords())
	if e.Files < 4 {
		fmt.Fprintf(&b, "  (%d recordings give a rough figure: each cell's variance across recordings has %d degrees of freedom; more recordings on separate starts make it steadier)\n", e.Files, e.Files-1)
	}
	return b.String()
}
