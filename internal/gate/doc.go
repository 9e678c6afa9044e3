// Package gate is the regression gate's comparison: it judges a new run
// of the suite against a baseline (both read by package input) and
// decides, per benchmark and metric, REGRESSION, IMPROVEMENT, NO CHANGE
// or INCONCLUSIVE, then checks thresholds.yaml's absolute limits on the
// new results. docs/gate.md explains the rules for people; in short:
//
//   - Statistics (package gatemath, as benchstat's benchmath): the median
//     of the runs with its interval and the Mann-Whitney U test's p.
//   - Direction: a `Unit X better=` line, else thresholds.yaml's better:,
//     else units.DefaultDirection. Metrics without one are never gated.
//   - Each profile's headline rows are combined (Cauchy) and corrected
//     with Holm over the profiles; the tails (tails.go) are tested by
//     runs; the gate fails through one α procedure (oneAlpha), start-aware
//     where a side's runs share a server start (start.go, points.go).
//   - A regression needs a significant p after correction and a change of
//     at least min_effect in the bad direction; NO CHANGE needs the
//     intervals to rule one out; anything else is INCONCLUSIVE, with the
//     runs a side that would decide.
//
// Compare returns a Report with its Outcome (an exit code) and a
// Pinpoint-style Decision; CompareFiles is a command's way in (Config).
// The layout follows golang.org/x/perf: input (benchfmt, benchproc) and
// gatemath (benchmath) below, this package, then render (text, markdown,
// JSON) above. Package gate must not import render, startspread or
// anything under cmd/, and holds no command-line flags: a command names
// its flags through Config and the typed errors (FilterError,
// EmptySelectionError, MismatchError).
package gate
