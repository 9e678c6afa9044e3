package input

import (
	"regexp"
	"slices"

	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"golang.org/x/perf/benchfmt"
)

// ServerStartKey is the configuration line that names the server start a
// result was measured on: the suite writes a new value at every start
// (docs/bench-format.md). The gate counts a side's starts of a benchmark
// by its distinct values, a result without the line counting as one
// start of its own, so that runs of several processes (go test run
// again, its outputs concatenated, or merged folders) are read as the
// several starts they are (docs/gate.md, "One server start a side").
const ServerStartKey = "server-start"

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

// GroupKeys are the configuration keys the grouping keeps: keys, then
// the provenance's.
func GroupKeys(keys []string) []string {
	out := slices.Clone(keys)
	for _, k := range slices.Concat(ProvenanceKeys, NoteKeys) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// DefaultConfigKeys are the file configuration keys (docs/bench-format.md)
// on which both sides of a comparison must agree: a result from another
// GPU, model, backend, server image or size (quick or full scenarios) is
// not a regression of this change.
// vllm-version is not among them (the image pins it); the set of profiles
// is always compared (ProfileSet: a new profile is not compared, a missing
// one refused). benchname.ConfigDataset is a benchmark's own: a scenario
// that sends a data set prints it before its benchmarks (and clears it
// after), so results of other data, or none, are not compared.
var DefaultConfigKeys = []string{"gpu", "model", "backend", "image", "size", benchname.ConfigDataset}

// procsSuffix is go test's -N GOMAXPROCS suffix of a benchmark name.
var procsSuffix = regexp.MustCompile(`-\d+$`)

// BenchmarkName is r's benchmark as the gate names it: Perf/… without
// the -N suffix.
func BenchmarkName(r *benchfmt.Result) string {
	return benchname.Bench + "/" + benchname.Short(procsSuffix.ReplaceAllString(string(r.Name), ""))
}
