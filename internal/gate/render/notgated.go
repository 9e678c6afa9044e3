package render

import (
	"slices"
	"strings"
)

// A UnitCount is how many rows of one unit the gate reported without
// judging them.
type UnitCount struct {
	Unit string
	Rows int
}

// NotGated counts the reported-only rows (Row.Reported: a direction, but
// neither a headline nor a tail metric, such as ready-ns, prefix-hit-%,
// goodput and the per-class P99s) by unit, the most rows first: what a
// PASS says nothing about.
func (r *Report) NotGated() []UnitCount {
	at := map[string]int{}
	var out []UnitCount
	for _, row := range r.Rows {
		if !row.Reported() {
			continue
		}
		i, ok := at[row.Unit]
		if !ok {
			i = len(out)
			at[row.Unit] = i
			out = append(out, UnitCount{Unit: row.Unit})
		}
		out[i].Rows++
	}
	slices.SortStableFunc(out, func(a, b UnitCount) int {
		if a.Rows != b.Rows {
			return b.Rows - a.Rows
		}
		return strings.Compare(a.Unit, b.Unit)
	})
	return out
}
