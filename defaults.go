// Package perf (the module root) holds the module root's files that are the project's
// defaults, embedded so that the code reads them and cannot disagree with
// them: thresholds.yaml (package thresholds' Default). The suite itself
// is perf_test.go (package perf_test).
package perf

import _ "embed"

// ThresholdsFile is the thresholds file's name at the module root.
const ThresholdsFile = "thresholds.yaml"

// Thresholds is thresholds.yaml as shipped: the defaults of every setting.
//
//go:embed thresholds.yaml
var Thresholds []byte
