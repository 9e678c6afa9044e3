// Package upgrade is the vLLM upgrade gate: the same scenario points on two
// servers (OLD and NEW: two vLLM images, or two simulator settings), run
// interleaved on one machine, then NEW gated against OLD with package
// gate's Compare.
//
// Why interleaved: a baseline recorded last week on the runner differs from
// today's run by more than the upgrade (other jobs, thermal state, driver
// updates). Running OLD and NEW in alternating blocks on the same runner
// puts that drift on both sides, so it cancels in the comparison. Pairs
// alternate which side goes first (OLD NEW, NEW OLD, OLD NEW, …), so a
// trend inside a pair and the first-run-after-start effect cancel too.
//
// Adaptive, as Chromium's Pinpoint: the gate starts at Config.MinPairs
// pairs and compares; while the answer is UNKNOWN (gate.Report.Decision:
// too few runs, or intervals too wide) it adds pairs, up to
// Config.MaxPairs, then says DIFFERENT (NEW is worse: fail), SAME (no
// regression as large as thresholds.yaml's min_effect: pass) or UNKNOWN at
// the cap (exit 3: raise the cap or min_effect).
//
// Servers (Config.Servers): Restart (the default) runs one server at a
// time, started for each block of runs of one side and stopped after it —
// the only choice when one GPU cannot hold two vLLM servers, and it samples
// start-to-start variation (memory layout, CUDA graph capture) on both
// sides instead of pinning it to one. Keep starts each side's server once
// and keeps both up while their profile's points run: fast, for the
// simulator or for two servers that fit on the runner's GPUs.
//
// Output parity (parity.go, package parity): on each side's first server
// of a profile, before its first block, the gate sends every point's
// greedy requests (thresholds.yaml's parity:) and compares OLD's and
// NEW's outputs: the identical share and the first differing token.
// Result.ParityFailures fail the upgrade whatever the decision.
//
// Every run is written as it finishes to OLD's and NEW's bench files
// (benchfmt, docs/bench-format.md), and each comparison reads those files
// back, so `vllmperf gate --baseline old.txt --new new.txt --force`
// reproduces the verdict (--force because the image differs by design).
package upgrade
