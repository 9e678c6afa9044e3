package input

import (
	"fmt"
	"slices"
)

// recorded is the one value a benchmark's side records for a key, or ""
// when it records none (older results) or several.
func recorded(vs []string) string {
	if len(vs) != 1 {
		return ""
	}
	return vs[0]
}

// ProvenanceDiffs compares the provenance of every benchmark both sides
// ran: mismatches of ProvenanceKeys (the digest only when keys hold the
// image) and, for NoteKeys, one warning per key.
func ProvenanceDiffs(base, next *Side, keys []string) ([]Mismatch, []string) {
	if len(keys) == 0 {
		return nil, nil // the caller asked for no configuration check
	}
	var out mismatchSet
	var notes []string
	noted := map[string]bool{}
	for _, key := range base.Order {
		nb, ok := next.Benches[key]
		if !ok {
			continue
		}
		bb := base.Benches[key]
		for _, k := range slices.Concat(ProvenanceKeys, NoteKeys) {
			if k == ImageDigestKey && !slices.Contains(keys, "image") {
				continue
			}
			bv, nv := recorded(bb.Config[k]), recorded(nb.Config[k])
			if bv == "" || nv == "" || bv == nv {
				continue
			}
			if slices.Contains(NoteKeys, k) {
				if !noted[k] {
					noted[k] = true
					notes = append(notes, fmt.Sprintf("%s differs: %q in the baseline, %q in the new results (recorded, not a setup key: the comparison stands)", k, bv, nv))
				}
				continue
			}
			m := Mismatch{Key: k, Baseline: joinValues([]string{bv}), New: joinValues([]string{nv})}
			if img := recorded(bb.Config["image"]); k == ImageDigestKey && img != "" && img == recorded(nb.Config["image"]) {
				m.Detail = fmt.Sprintf("the same image %q resolved to another build", img)
			}
			out.add(m, bb.Name)
		}
	}
	return out.list, notes
}
