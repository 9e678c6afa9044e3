// Package calibration is the simulator's calibration set: published vLLM
// serving measurements (GPU, model, server flags, workload and the figures
// reported), stored as YAML under data/ (one file per source) and embedded in
// the binary.
//
//	rows, err := calibration.Load()          // strict YAML, validated, split checked
//	for _, r := range calibration.FitRows(rows) {
//		in, err := r.SimInputs()              // GPU and model presets, vllm-sim args, workload
//		...
//	}
//
// Every figure is copied from its source, whose address and a locator sit
// next to it; a field the source does not give is left out, never estimated.
// Rows are split into a fit set and a held-out check set by a fixed rule on
// the row id (ExpectedSplit); Load rejects a row whose stored split differs.
//
// The package stands alone: it does not import the simulator. The preset
// names and the flags the simulator models are listed in presets.go and
// checked against the simulator's source by a test.
package calibration
