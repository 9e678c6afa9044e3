#!/bin/bash
# Records the runner experiment of docs/gate.md ("A slower runner") into
# DIR (quiet/ and busy/ are the recorded ones); run from the module root:
#   bash internal/gate/testdata/runner/record.sh internal/gate/testdata/runner/DIR
# basic × ttft-tpot at quick size, 8 runs a point, the in-process
# simulator: A the baseline, B unchanged, C unchanged under 8 bounded busy
# loops, D with --sim-slowdown 1.10. DIR/conditions.txt gets each side's
# exit status, end time and load average. Then
#   VLLMPERF_UPDATE_FIGURES=1 go test -run TestFiguresRunner ./internal/gate/
# rewrites the table.
set -u
out=${1:?usage: record.sh DIR (a folder under internal/gate/testdata/runner)}
mkdir -p "$out" || exit 1
: > "$out/conditions.txt"
bin=$(mktemp -d)
go test -c -o "$bin/perf.test" . || exit 1
export VLLMPERF_PROFILES=basic VLLMPERF_SCENARIOS=ttft-tpot VLLMPERF_SIZE=quick VLLMPERF_BACKEND=sim VLLMPERF_TELEMETRY= VLLMPERF_RESULTS=
bench() { "$bin/perf.test" -test.run '^$' -test.bench Perf -test.benchtime 1x -test.count 8 > "$out/$1.txt" 2> "$bin/$1.err"; echo "$1: exit $? $(date -u +%T) $(uptime)" | tee -a "$out/conditions.txt"; }
VLLMPERF_SIM_ARGS= bench A
VLLMPERF_SIM_ARGS= bench B
pids=()
for _ in 1 2 3 4 5 6 7 8; do timeout 120 sh -c 'while :; do :; done' & pids+=($!); done
VLLMPERF_SIM_ARGS= bench C
kill "${pids[@]}" 2>/dev/null
wait "${pids[@]}" 2>/dev/null
VLLMPERF_SIM_ARGS='--sim-slowdown 1.10' bench D
rm -rf "$bin"
