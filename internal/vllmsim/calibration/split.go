package calibration

import (
	"hash/fnv"
	"sort"
)

// ExpectedSplit assigns every row its split by the split rule, keyed by row
// id:
//
//  1. A row is in the check set when the 32-bit FNV-1a hash of its id is
//     divisible by 3 (about a third of the rows, decided by the id alone).
//  2. In every group of rows sharing a GPU preset and a model preset that has
//     two rows or more, the row with the smallest hash (ties: the smaller id)
//     is in the check set too, so every such group is checked at least once.
//
// Every other row is in the fit set. Rule 1 depends on the id alone, so
// adding rows never changes it; under rule 2 a new row can take a group's
// check place (its old holder returns to fit), and a row moves from fit to
// check only when its group gains its second row. After such an addition the
// fit must be redone without that row.
func ExpectedSplit(rows []Row) map[string]Split {
	out := make(map[string]Split, len(rows))
	type key struct{ gpu, model string }
	groups := map[key][]Row{}
	for _, r := range rows {
		out[r.ID] = Fit
		if idHash(r.ID)%3 == 0 {
			out[r.ID] = Check
		}
		k := key{r.Hardware.GPU, r.Model.Preset}
		groups[k] = append(groups[k], r)
	}
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		sort.Slice(g, func(i, j int) bool {
			hi, hj := idHash(g[i].ID), idHash(g[j].ID)
			if hi != hj {
				return hi < hj
			}
			return g[i].ID < g[j].ID
		})
		out[g[0].ID] = Check
	}
	return out
}

// idHash is the 32-bit FNV-1a hash of a row id.
func idHash(id string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(id))
	return h.Sum32()
}

// FitRows returns the rows of the fit set, in order.
func FitRows(rows []Row) []Row { return bySplit(rows, Fit) }

// CheckRows returns the rows of the check set, in order.
func CheckRows(rows []Row) []Row { return bySplit(rows, Check) }

func bySplit(rows []Row, s Split) []Row {
	var out []Row
	for _, r := range rows {
		if r.Split == s {
			out = append(out, r)
		}
	}
	return out
}
