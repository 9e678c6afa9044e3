// Package input reads one side of a gate's comparison: a file of Go's
// benchmark format (`go test -bench` output, docs/bench-format.md) into an
// Input (golang.org/x/perf/benchfmt, as benchstat reads it), with its
// `Unit X better=` lines, the checks that failed a benchmark (its
// `--- FAIL:` block, CheckLine), and the configuration keys a comparison
// reads (DefaultConfigKeys, the provenance keys, ServerStartKey). Grouping
// sorts an Input's results into benchmarks with benchproc, as Compare and
// benchstat group them; Keep cuts an Input to a benchproc filter.
//
// It is the bottom of the gate, like x/perf's benchfmt: it must not
// import package gate, its statistics (gatemath) or its renderers
// (render), nor anything that runs a benchmark; only the vocabulary
// (internal/vocab/...) and x/perf.
package input
