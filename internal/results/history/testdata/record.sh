#!/usr/bin/env bash
# Records a history store the history tests read: 24 runs of the embedded
# simulator (profile basic, scenario ttft-tpot, quick size, -count 10;
# docs/history.md gives a run's time, from make timings), runs 17–24 with
# --sim-slowdown 1.04 (4% slower: under the gate's 5% min_effect), each
# added with `vllmperf history add`; the first slowed run carries a note.
# Run from the module root:
#   [STORE=DIR] [SIM_SEED=N] bash internal/results/history/testdata/record.sh [WORKDIR]
# STORE (default internal/results/history/testdata/sim) is the store
# written, from scratch. SIM_SEED, when set, gives run i the simulator seed
# SIM_SEED + i, its own noise (testdata/sim was recorded without it: every
# run had the simulator's default seed 0 and replayed the same modelled
# noise). STORE-conditions.txt gets each run's end and the machine's load
# average. WORKDIR (default a temporary folder) keeps the results folders.
set -euo pipefail
work=${1:-$(mktemp -d)}
store=${STORE:-internal/results/history/testdata/sim}
commit=$(git rev-parse HEAD)
go test -c -o "$work/perf.test" .
go build -o "$work/vllmperf" ./cmd/vllmperf
rm -rf "$store"
: > "$store-conditions.txt"
for i in $(seq -w 1 24); do
  dir=$work/run$i
  mkdir -p "$dir"
  args="" note=()
  if [ -n "${SIM_SEED:-}" ]; then args="--sim-seed $((SIM_SEED + 10#$i))"; fi
  if [ $((10#$i)) -ge 17 ]; then args="$args --sim-slowdown 1.04"; fi
  if [ $((10#$i)) -eq 17 ]; then note=(--event "VLLMPERF_SIM_ARGS=--sim-slowdown 1.04 from this run on"); fi
  VLLMPERF_PROFILES=basic VLLMPERF_SCENARIOS=ttft-tpot VLLMPERF_RESULTS=$dir VLLMPERF_SIM_ARGS="${args# }" \
    "$work/perf.test" -test.short -test.run '^$' -test.bench Perf -test.benchtime 1x -test.count 10 > "$dir/bench.txt"
  echo "run $i: VLLMPERF_SIM_ARGS='${args# }' ended $(date -u +%T), load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$store-conditions.txt"
  "$work/vllmperf" history add "$dir" --store "$store" --commit "$commit" --ref "$(git rev-parse --abbrev-ref HEAD)" "${note[@]}"
done
