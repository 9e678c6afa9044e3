// Package gate is the regression gate: it compares a new run of the
// suite with a baseline (both in Go's benchmark format, docs/bench-format.md)
// and decides, per benchmark and metric, REGRESSION, IMPROVEMENT, NO CHANGE
// or INCONCLUSIVE, then checks thresholds.yaml's absolute limits on the new
// results. docs/gate.md explains the rules for people; in short:
//
//   - Reading and grouping: golang.org/x/perf/benchfmt reads the files,
//     benchproc groups runs by the full benchmark name (profile, scenario
//     and point keys; the -N GOMAXPROCS suffix ignored) and unit.
//   - Statistics: benchmath.AssumeNothing, as the benchstat command: the
//     median of the runs with its confidence interval (order statistics),
//     and the Mann-Whitney U test's p-value. Compare's medians, intervals
//     and p are the numbers benchstat prints for the same files.
//   - Direction: a `Unit X better=` line, else thresholds.yaml's better:,
//     else units.DefaultDirection. Metrics without one are shown,
//     never gated.
//   - Holm's correction over every gated test of the run, so that fifty
//     metrics do not give fifty chances of a false alarm.
//   - Tails (tails.go): the P99s of TTFT, TPOT and ITL are tested per
//     profile and metric by runs, and the gate fails through one α
//     procedure over the profiles (oneAlpha). Each judged metric gets its
//     minimum detectable effect from the baseline's spread (mde.go).
//   - A regression needs a significant p after correction and a change of
//     at least min_effect in the bad direction. NO CHANGE needs the
//     intervals to rule out such a regression. Anything else is
//     INCONCLUSIVE, with an estimate of the runs a side that would decide.
//
// Compare does the work and returns a Report; the Report writes itself as
// text, markdown or JSON, and maps to an exit code (Outcome) and to a
// Pinpoint-style Decision for gates that add runs until they can decide.
package gate
