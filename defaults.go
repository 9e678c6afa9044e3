// Package perf (the module root) holds the module root's files that are the project's
// defaults, embedded so that the code reads them and cannot disagree with
// them: thresholds.yaml (package thresholds' Default) and the simulator
// baseline baselines/sim.txt (the plan's prior spread). The suite itself
// is perf_test.go (package perf_test).
package perf

import _ "embed"

// ThresholdsFile is the thresholds file's name at the module root.
const ThresholdsFile = "thresholds.yaml"

// Thresholds is thresholds.yaml as shipped: the defaults of every setting.
//
//go:embed thresholds.yaml
var Thresholds []byte

// SimBaselineFile is the committed simulator baseline's path from the
// module root.
const SimBaselineFile = "baselines/sim.txt"

// SimBaseline is baselines/sim.txt as committed: the plan's prior
// run-to-run spread on a key without an earlier run (package perfgate).
//
//go:embed baselines/sim.txt
var SimBaseline []byte
