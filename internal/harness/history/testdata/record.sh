#!/usr/bin/env bash
# Records testdata/sim, the history store the history tests read: 24 runs of
# the embedded simulator (profile basic, scenario ttft-tpot, quick size,
# -count 10; docs/history.md gives a run's time, from make timings), runs
# 17–24 with VLLMPERF_SIM_ARGS='--sim-slowdown 1.04' (4% slower: under the
# gate's 5% min_effect), each added with `vllmperf history add`; the first
# slowed run carries a note. Run from the module root:
#   bash internal/harness/history/testdata/record.sh [WORKDIR]
# WORKDIR (default a temporary folder) keeps the results folders.
set -euo pipefail
work=${1:-$(mktemp -d)}
store=internal/harness/history/testdata/sim
commit=$(git rev-parse HEAD)
go test -c -o "$work/perf.test" .
go build -o "$work/vllmperf" ./cmd/vllmperf
rm -rf "$store"
for i in $(seq -w 1 24); do
  dir=$work/run$i
  mkdir -p "$dir"
  args="" note=()
  if [ $((10#$i)) -ge 17 ]; then args="--sim-slowdown 1.04"; fi
  if [ $((10#$i)) -eq 17 ]; then note=(--event "VLLMPERF_SIM_ARGS=--sim-slowdown 1.04 from this run on"); fi
  VLLMPERF_PROFILES=basic VLLMPERF_SCENARIOS=ttft-tpot VLLMPERF_RESULTS=$dir VLLMPERF_SIM_ARGS="$args" \
    "$work/perf.test" -test.short -test.run '^$' -test.bench Perf -test.benchtime 1x -test.count 10 > "$dir/bench.txt"
  "$work/vllmperf" history add "$dir" --store "$store" --commit "$commit" --ref "$(git rev-parse --abbrev-ref HEAD)" "${note[@]}"
done
