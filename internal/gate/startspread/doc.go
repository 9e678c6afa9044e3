// Package startspread measures how much a server start moves the suite's
// figures (docs/gate.md, "One server start a side"), from recordings of
// the suite each on its own start: the value for thresholds.yaml's
// start_spread, per profile and per judged metric with an upper bound.
// It is `vllmperf start-spread`'s library (cmd/vllmperf/internal/gatecli).
//
// It reads grouped input (package input) and the gate's statistics
// (gatemath), and names the units the gate judges as tails from package
// gate; nothing of the gate or its renderers may import it.
package startspread
