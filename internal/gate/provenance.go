package gate

import (
	"fmt"
	"slices"
)

// Provenance configuration keys (docs/bench-format.md; the suite writes
// them). Old results without them still compare: a key is checked only
// where both sides record it.
const (
	// ImageDigestKey is the image's resolved digest: under one tag (a
	// "latest", a nightly) it names the build that actually ran.
	ImageDigestKey = "image-digest"
	// DriverKey and CUDAKey are the NVIDIA driver and the CUDA version it
	// supports.
	DriverKey = "driver"
	CUDAKey   = "cuda"
)

// ProvenanceKeys must match where both sides record them, as
// DefaultConfigKeys do: another driver or CUDA is another setup, and
// another digest under the same image is another build. The digest is
// compared only when the image is among the keys (the upgrade gate
// compares two images, whose digests differ by design).
var ProvenanceKeys = []string{ImageDigestKey, DriverKey, CUDAKey}

// NoteKeys are recorded provenance whose difference is a warning, not a
// refusal: the client's host CPU and the server's VLLM_*/OMP_*
// environment.
var NoteKeys = []string{"host-cpu", "server-env"}

// groupKeys are the configuration keys the grouping keeps: keys, then
// the provenance's.
func groupKeys(keys []string) []string {
	out := slices.Clone(keys)
	for _, k := range slices.Concat(ProvenanceKeys, NoteKeys) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// recorded is the one value a benchmark's side records for a key, or ""
// when it records none (older results) or several.
func recorded(vs []string) string {
	if len(vs) != 1 {
		return ""
	}
	return vs[0]
}

// provenanceDiffs compares the provenance of every benchmark both sides
// ran: mismatches of ProvenanceKeys (the digest only when keys hold the
// image) and, for NoteKeys, one warning per key.
func provenanceDiffs(base, next *sideData, keys []string) ([]Mismatch, []string) {
	if len(keys) == 0 {
		return nil, nil // the caller asked for no configuration check
	}
	var out mismatchSet
	var notes []string
	noted := map[string]bool{}
	for _, key := range base.order {
		nb, ok := next.benches[key]
		if !ok {
			continue
		}
		bb := base.benches[key]
		for _, k := range slices.Concat(ProvenanceKeys, NoteKeys) {
			if k == ImageDigestKey && !slices.Contains(keys, "image") {
				continue
			}
			bv, nv := recorded(bb.config[k]), recorded(nb.config[k])
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
			if img := recorded(bb.config["image"]); k == ImageDigestKey && img != "" && img == recorded(nb.config["image"]) {
				m.Detail = fmt.Sprintf("the same image %q resolved to another build", img)
			}
			out.add(m, bb.name)
		}
	}
	return out.list, notes
}
