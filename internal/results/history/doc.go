// Package history keeps every run of the suite and looks for change
// points across them: the slow drifts that no single gate catches, when
// each step stays under the gate's min_effect and a re-baseline then hides
// it for good (docs/history.md).
//
//   - The store (Store, Init, Open) is a folder of runs, one folder per
//     run with its record (run.json: the setup's key, commit, image, date,
//     check outcomes, events) and its bench output verbatim (bench.txt,
//     every unit of every point). Workflows keep it on a branch or in a
//     cache; nothing else is needed.
//   - Group reads the runs into one history per key (the configuration
//     lines a comparison needs the same, gate.DefaultConfigKeys without the
//     image), each with its series (one per benchmark and unit: the median
//     of every run's repetitions) and its known events (an image or vLLM
//     version change, a re-baseline, a note given when adding).
//   - Check runs E-divisive means (package changepoint) over every gated
//     series, the directions resolved by the gate's own code
//     (gate.Input.Direction: Unit lines, thresholds.yaml, the unit's
//     name); Benjamini and Hochberg's procedure over the series' p-values
//     sets one cutoff for the whole check; changes smaller than MinChange
//     are dropped. The CheckReport lists each change with the run where it
//     starts, its size, its p-value and the runs around it, largest first,
//     and maps to the gate's exit statuses.
//   - Show lists and exports (CSV, JSON) what Group selected.
//
// package report draws the series (history.html, and report.html's trend
// section).
package history
