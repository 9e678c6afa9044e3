# vllmperf — see README.md. The two commands a newcomer needs:
#   make bench   the whole suite on the embedded simulator (quick size), the gate against baselines/sim.txt, the report
#   make test    every test (Docker and promtool tests run when those are present; CI=true makes them required)

GO        ?= go
PKGS      ?= ./...
LABEL     := org.vllmperf.managed=true
BENCH_ARGS ?= --backend sim --profile basic --concurrency 16 --requests 128 --warmup 2 --prompt-tokens 256 --max-tokens 64

SHELL := /bin/bash

# testcontainers' reaper (Ryuk) is an image pulled from Docker Hub; where none
# can be pulled its start would fail (and ask the network). vllmperf removes
# every container it starts itself, and leak-check proves it.
export TESTCONTAINERS_RYUK_DISABLED ?= true

.PHONY: all bench run test vet fmt-check unit leak-check build sim-image clean calibrate fit figures

all: build

build:
	$(GO) build ./...
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/vllm-sim ./cmd/vllm-sim
	$(GO) build -o bin/vllmperf ./cmd/vllmperf

# make bench: the whole suite (every profile x scenario, quick size) on the
# embedded simulator, into a results folder; then the regression gate against
# the stored simulator baseline (see below, gate.json in the folder); then the
# folder's table, knees and diagnosis, and report.html/report.md with the gate.
RESULTS ?= results/$(shell date -u +%Y%m%dT%H%M%SZ)
# A failed check fails its benchmark (go test exits 1), and the gate, the
# report and the results folder are still written before make bench fails.
bench:
	@mkdir -p $(RESULTS)
	@$(GO) build -o bin/vllmperf ./cmd/vllmperf
	@set -o pipefail; bcode=0; gcode=0; \
	VLLMPERF_SIZE=$${VLLMPERF_SIZE:-quick} VLLMPERF_RESULTS=$(RESULTS) \
	  $(GO) test -run '^$$' -bench Perf -benchtime 1x -timeout 30m . | tee $(RESULTS)/bench.txt || bcode=$$?; \
	( $(BENCH_GATE) ) || gcode=$$?; \
	bin/vllmperf report $(RESULTS) || gcode=$$?; \
	echo "results: $(RESULTS)"; \
	if [ $$bcode -ne 0 ]; then echo "bench: a benchmark failed its checks (the --- FAIL: lines above; the gate lists them)"; exit $$bcode; fi; \
	exit $$gcode

# make calibrate: replay every calibration row (internal/vllmsim/calibration)
# against the simulator in simulated time (seconds), and one row per model
# preset through the HTTP API in real time (seconds more), print the tables
# of published vs simulated figures and token vs HTTP path, and rewrite
# them in docs/calibration.md.
calibrate:
	$(GO) test -count=1 -run '^TestCalibration$$' -v ./internal/calreplay/ -update

# make figures: rewrite the generated figures of README.md and docs/ in
# place, between their <!-- figures NAME: begin/end --> markers, from
# committed inputs (baselines/sim.txt, the gate-quality pools in
# internal/orchestrate/upgrade/testdata/quality, make timings' record
# docs/figures/timings.txt). make test runs the same tests without
# VLLMPERF_UPDATE_FIGURES: a figure edited by hand, or one whose
# inputs changed, fails them. (make calibrate rewrites docs/calibration.md.)
FIGURE_PKGS := ./internal/gate/ ./internal/gate/render/ ./internal/orchestrate/upgrade/ ./internal/gate/gatequality/ ./internal/docfigures/ ./internal/vocab/envvar/
figures:
	VLLMPERF_UPDATE_FIGURES=1 $(GO) test -count=1 -p 1 -run '^(TestFigures|TestRunsNeededEstimate$$)' $(FIGURE_PKGS)

# make fault-cases: run the fault matrix's tests (those that declare
# testphase.Fault; docs/reliability.md, minutes, Docker) with go test
# -json, list their leaf cases in docs/figures/fault-cases.txt and rewrite
# the counts in the page.
.PHONY: fault-cases timings
fault-cases:
	@args=$$($(TESTPHASE) fault) || exit 1; tmp=$$(mktemp); \
	eval "VLLMPERF_TEST_PHASE= CI=true TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1 $(GO) test -count=1 -json $$args" > $$tmp || true; \
	VLLMPERF_FAULT_JSON=$$tmp VLLMPERF_UPDATE_FIGURES=1 $(GO) test -count=1 -run '^TestFiguresFaults$$' ./internal/docfigures/; code=$$?; rm -f $$tmp; exit $$code

# make timings: run once each command whose wall-clock time README.md and
# docs/ quote (make bench, one run of the suite, the quick capacity search,
# a run of the history store's recording, the engine's and the history
# quality tests: timedCommands in internal/docfigures/timings_test.go), on
# an otherwise idle machine, without the VLLMPERF_ settings; record each
# command's wall seconds, start, nproc and result in
# docs/figures/timings.txt and rewrite the pages' timing figures from it.
# make baseline is not timed (10 runs of the suite): its figure is 10 x
# the suite's. make test checks the pages against the committed record,
# never this machine's speed now.
timings:
	VLLMPERF_TIMINGS=1 VLLMPERF_UPDATE_FIGURES=1 $(GO) test -count=1 -v -timeout 60m -run '^TestFiguresTimings$$' ./internal/docfigures/

# make fit: choose how the simulator's costs are fitted by
# leave-one-source-out cross-validation (for each prior weight in
# replay.FitPriors, one fit per source without that source's fit rows, each
# scored on the rows it never saw; the least held-out loss wins), fit the
# costs on every fit row with the chosen weight, and write
# internal/calreplay/loso.yaml (tens of minutes). Put the full fit's
# costs into presets.FittedCosts (internal/vllmsim/engine/presets/presets.go), then
# make calibrate. Check rows are never replayed by it.
fit:
	$(GO) test -count=1 -timeout 120m -run '^TestFit$$' -v ./internal/calreplay/ -fit all

# --- The regression gate (docs/gate.md) -------------------------------------

# The stored baseline of the embedded simulator (quick size), and the runs
# of every point it holds: 10, the perf-gate workflow's count. Fewer cannot
# decide: the gate's min_samples is 6, and the correction over the suite's
# headline tests asks of the first a p the exact U test reaches only from
# some 8 runs a side (docs/gate.md, the figures make figures computes).
SIM_BASELINE   ?= baselines/sim.txt
GPU_BASELINE   ?= baselines/gpu.txt
BASELINE_COUNT ?= 10
# The server starts a baseline's runs are spread over: each start is a
# process of its own running BASELINE_COUNT/BASELINE_STARTS runs of every
# point, so that the gate allows less for two starts' difference
# (docs/gate.md, "More starts a side"). 1: one process, as before.
BASELINE_STARTS ?= 1
# A baseline is the default setup: none of the suite's settings.
SUITE_DEFAULTS := env -u VLLMPERF_BACKEND -u VLLMPERF_IMAGE -u VLLMPERF_TARGET -u VLLMPERF_MODEL \
  -u VLLMPERF_SIM_ARGS -u VLLMPERF_GPU_NAME -u VLLMPERF_PROFILES -u VLLMPERF_SCENARIOS \
  -u VLLMPERF_THRESHOLDS -u VLLMPERF_RESULTS -u VLLMPERF_SIZE

# make bench's last step. With one run per point the honest verdict is
# INCONCLUSIVE (exit 3: "run N more"): that passes. Exit 1 (an absolute
# limit of thresholds.yaml broken, a failed request, a metric gone: no row
# can be a regression with one run) and 2 (the results cannot be compared
# with the baseline) fail. A setup the baseline was not recorded with
# (another backend, size, profile set, model or GPU name) skips the gate;
# VLLMPERF_SIM_ARGS does not (--sim-slowdown 1.2 shows the gate at work).
define BENCH_GATE
skip=""; \
case "$${VLLMPERF_BACKEND:-sim}" in sim) ;; *) skip="VLLMPERF_BACKEND=$$VLLMPERF_BACKEND";; esac; \
case "$${VLLMPERF_SIZE:-quick}" in quick) ;; *) skip="VLLMPERF_SIZE=$$VLLMPERF_SIZE";; esac; \
for v in VLLMPERF_PROFILES VLLMPERF_MODEL VLLMPERF_GPU_NAME; do [ -z "$${!v}" ] || skip="$$v=$${!v}"; done; \
if [ -n "$$skip" ]; then \
  echo "gate: skipped: $(SIM_BASELINE) is the default simulator setup at quick size, and $$skip is set"; \
elif [ ! -f "$(SIM_BASELINE)" ]; then \
  echo "gate: skipped: no $(SIM_BASELINE) (record it with make baseline)"; \
else \
  echo; echo "gate: $(RESULTS)/bench.txt against $(SIM_BASELINE)"; \
  code=0; bin/vllmperf gate --baseline $(SIM_BASELINE) --new $(RESULTS)/bench.txt --format summary --json $(RESULTS)/gate.json \
    $${VLLMPERF_THRESHOLDS:+--thresholds "$$VLLMPERF_THRESHOLDS"} || code=$$?; \
  case $$code in \
    0) ;; \
    3) echo "gate: INCONCLUSIVE is the expected verdict of one run per point (make bench passes). For a verdict (10 runs of the suite):"; \
       echo "  VLLMPERF_SIZE=quick go test -run '^\$$' -bench Perf -benchtime 1x -count $(BASELINE_COUNT) . | tee new.txt"; \
       echo "  go run ./cmd/vllmperf gate --baseline $(SIM_BASELINE) --new new.txt";; \
    *) exit $$code;; \
  esac; \
fi
endef

# record_baseline runs the suite (environment $(1), go test -timeout $(2))
# BASELINE_STARTS times, BASELINE_COUNT/BASELINE_STARTS runs each, into
# $(3).tmp: each process starts every profile's server anew.
define record_baseline
	@if ! [ "$(BASELINE_STARTS)" -ge 1 ] 2>/dev/null || [ $$(( $(BASELINE_COUNT) % $(BASELINE_STARTS) )) -ne 0 ]; then \
	  echo "make: BASELINE_STARTS=$(BASELINE_STARTS) must be a whole number ≥ 1 that divides BASELINE_COUNT=$(BASELINE_COUNT) (every start runs the same count)" >&2; exit 2; fi
	for start in $$(seq $(BASELINE_STARTS)); do \
	  $(1) $(GO) test -run '^$$' -bench Perf -benchtime 1x -count $$(( $(BASELINE_COUNT) / $(BASELINE_STARTS) )) -timeout $(2) . || exit $$?; \
	done > $(3).tmp
endef

# make baseline: re-record $(SIM_BASELINE) (10 runs of the suite: README
# gives the time, 10 x the suite's in docs/figures/timings.txt). Only
# this target writes it; commit it with the change that made it
# necessary (when: docs/gate.md, "When to re-baseline").
.PHONY: baseline baseline-gpu upgrade-gate
baseline:
	@mkdir -p $(dir $(SIM_BASELINE))
	$(call record_baseline,$(SUITE_DEFAULTS) VLLMPERF_SIZE=quick,3h,$(SIM_BASELINE))
	@mv $(SIM_BASELINE).tmp $(SIM_BASELINE)
	@echo "baseline: $(SIM_BASELINE), $(BASELINE_COUNT) runs of every point on $(BASELINE_STARTS) server start(s) a profile"

# make baseline-gpu: $(GPU_BASELINE), a committed GPU baseline, on the GPU
# runner: the container backend (VLLMPERF_IMAGE, default the pinned vLLM
# image), full size. perf-gate.yml gates against it when the repository
# variable VLLMPERF_BASELINE names it; otherwise make perf-gate keeps (and
# records on its first run) a baseline per key on the runner.
baseline-gpu:
	@mkdir -p $(dir $(GPU_BASELINE))
	$(call record_baseline,VLLMPERF_BACKEND=container,12h,$(GPU_BASELINE))
	@mv $(GPU_BASELINE).tmp $(GPU_BASELINE)
	@echo "baseline: $(GPU_BASELINE), $(BASELINE_COUNT) runs of every point on $(BASELINE_STARTS) server start(s) a profile"

# make upgrade-gate OLD=image:tag NEW=image:tag: the scenario points on
# both images interleaved on this machine, NEW gated against OLD, adding
# pairs while undecided (vllmperf upgrade-gate --help). OLD/NEW may be
# "sim" or "in-process" (the simulator) with OLD_SIM_ARGS/NEW_SIM_ARGS, e.g.
#   make upgrade-gate OLD=in-process NEW=in-process NEW_SIM_ARGS='--sim-slowdown 1.1' UPGRADE_ARGS='--size quick'
# upgrade-gate.yml runs exactly this with POINTS, MAX_PAIRS, SERVERS and
# RESULTS in the environment; the recipe reads every input as a shell
# variable ("$$OLD"), never pasted into the command line by make.
UPGRADE_ARGS ?=
export OLD NEW OLD_SIM_ARGS NEW_SIM_ARGS POINTS MAX_PAIRS SERVERS
upgrade-gate:
	@if [ -z "$$OLD" ] || [ -z "$$NEW" ]; then \
	  echo "usage: make upgrade-gate OLD=image:tag NEW=image:tag [OLD_SIM_ARGS=... NEW_SIM_ARGS=... POINTS=... MAX_PAIRS=20 SERVERS=restart RESULTS=dir UPGRADE_ARGS=...]"; exit 2; \
	fi
	@$(GO) build -o bin/vllmperf ./cmd/vllmperf
	bin/vllmperf upgrade-gate --old "$$OLD" --new "$$NEW" --old-sim-args "$$OLD_SIM_ARGS" --new-sim-args "$$NEW_SIM_ARGS" \
	  $${POINTS:+--points "$$POINTS"} $${MAX_PAIRS:+--max-pairs "$$MAX_PAIRS"} $${SERVERS:+--servers "$$SERVERS"} \
	  $${UPGRADE_RESULTS:+--results "$$UPGRADE_RESULTS"} $(UPGRADE_ARGS)

# make perf-gate: what perf-gate.yml runs (package perfgate, vllmperf
# perf-gate --help): the plan (server starts, points, runs, time from the
# last run on the same key; VLLMPERF_BUDGET=2h picks VLLMPERF_COUNT), the
# suite (go test -bench Perf -count $$VLLMPERF_COUNT, default 10) into
# $$VLLMPERF_GATE_RESULTS, then the gate against the baseline stored for
# the run's key (runner, GPU, backend, image, model, size, profiles,
# scenarios) in
# $$VLLMPERF_BASELINE_STORE (default ~/.cache/vllmperf/baselines). With
# none for the key, this run is recorded as it and passes (a notice says
# so). Honours VLLMPERF_PROFILES, VLLMPERF_SCENARIOS, VLLMPERF_IMAGE,
# VLLMPERF_GPUS, VLLMPERF_SIM_ARGS, VLLMPERF_GPU_SETS (profiles at once on
# GPU sets) and VLLMPERF_GATE_STEP (suite or gate: perf-gate.yml's matrix); the
# backend is the container one unless VLLMPERF_BACKEND says otherwise.
# The old names COUNT, RESULTS, ALLOW_INCONCLUSIVE and PERF_GATE_* are
# still read, with a warning (docs/settings.md). docs/gpu-runners.md,
# docs/gate.md.
#   VLLMPERF_PROFILES=basic VLLMPERF_SCENARIOS=ttft-tpot VLLMPERF_COUNT=8 VLLMPERF_IMAGE=sim VLLMPERF_GPUS=none make perf-gate
# make plan: the plan alone.
.PHONY: perf-gate plan remove-leftovers
export VLLMPERF_COUNT COUNT
perf-gate:
	@$(GO) build -o bin/vllmperf ./cmd/vllmperf
	VLLMPERF_BACKEND=$${VLLMPERF_BACKEND:-container} bin/vllmperf perf-gate
plan:
	@$(GO) build -o bin/vllmperf ./cmd/vllmperf
	@VLLMPERF_BACKEND=$${VLLMPERF_BACKEND:-container} bin/vllmperf plan

# make remove-leftovers: remove the containers a run left behind (the
# workflows' last step; make leak-check fails on them instead).
remove-leftovers:
	@left=$$(docker ps -aq --filter label=$(LABEL)); \
	if [ -n "$$left" ]; then echo "::warning::removing containers the run left behind"; docker rm -f $$left; fi

# make run: one vllmperf run against the embedded simulator (BENCH_ARGS).
run:
	$(GO) run ./cmd/vllmperf run $(BENCH_ARGS)

test: fmt-check vet unit fuzz leak-check lint-workflows

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

# make test's phases (package testphase, CONTRIBUTING.md): a test declares
# its phase in its own body (testphase.Measured, Timed, Alone), and
# VLLMPERF_TEST_PHASE tells it which phase is running: a test of another
# phase skips itself. $(TESTPHASE) reads the declarations from the source
# and prints the go test arguments of one phase: its tests' names and the
# packages that define them.
# - race: every package under the race detector, two packages at a time.
# - measured, beside it, at nice 10, without -race: long computations
#   (measurements, replays) that would take minutes under the race
#   detector. (Beside the alone phase instead, its CPU starved the
#   lanes' real-time servers: a fresh-clone CI failed on sim_real_time,
#   a container simulator losing 60% of its engine time to the host.)
# - timed, after the rest, one package at a time: millisecond-accurate
#   real-time asserts, with nothing else on the machine.
# - alone, last: tests of go test or make subprocesses, servers and
#   containers of their own, in lanes (testphase.Lane) that run at the
#   same time, a go test each, its packages two at a time: the default
#   lane, the containers lane (container starts wait for one another on
#   the devices' lease anyway) and the suite lane (TestPerf, minutes of
#   real time).
# -vet=off: make test runs go vet on every package first.
TESTPHASE = $(GO) run ./internal/testphase/cmd/testphase
# $(call run_phase,PHASE,PREFIX,FLAGS[,TESTPHASE FLAGS]): go test FLAGS of
# PHASE's tests in $(PKGS) (narrowed by the testphase flags, e.g. -lane),
# the command prefixed by PREFIX.
define run_phase
args=$$($(TESTPHASE) $(4) $(1) $(PKGS)) || exit 1; \
if [ -z "$$args" ]; then echo "unit: no test of $(PKGS) declares the $(1) phase $(4)"; else \
  cmd="VLLMPERF_TEST_PHASE=$(1) $(2) $(GO) test -vet=off -count=1 $(3) $$args"; echo "$$cmd"; eval "$$cmd"; fi
endef
unit:
	( $(call run_phase,measured,nice -n 10,-timeout 10m -p 1) ) & measured=$$!; \
	VLLMPERF_TEST_PHASE=race $(GO) test -race -vet=off -count=1 -timeout 15m -p 2 $(PKGS); race=$$?; \
	wait $$measured; measured=$$?; \
	[ $$race = 0 ] || echo "unit: the tests under -race failed"; [ $$measured = 0 ] || echo "unit: the measured phase failed"; \
	[ $$race = 0 ] && [ $$measured = 0 ]
	@$(call run_phase,timed,,-timeout 5m -p 1)
	@lanes=$$($(TESTPHASE) -lanes alone $(PKGS)) || exit 1; pids=(); names=(); \
	for lane in $$lanes; do ( $(call run_phase,alone,,-timeout 25m -p 2,-lane $$lane) ) & pids+=($$!); names+=($$lane); done; \
	code=0; for i in "$${!pids[@]}"; do wait "$${pids[$$i]}" || { code=1; echo "unit: the alone phase's $${names[$$i]} lane failed"; }; done; exit $$code

# make fuzz: each parser of outside input (bench files, /metrics pages,
# SSE streams, data sets and traces, thresholds and profile YAML, the
# calibration tables) fuzzed briefly beyond its seed corpus (testdata/fuzz,
# which go test runs as tests anyway). A count, not a time: a worker of a
# package with goleak's TestMain stalls in -fuzztime's timed mode. A
# failing input is written to the package's testdata/fuzz: commit it with
# the fix. FUZZ_EXECS=100000 make fuzz digs deeper.
FUZZ_TARGETS = ./internal/gate/input:FuzzRead ./internal/target/scrape:FuzzParse \
	./internal/request/openai:FuzzStream ./internal/request/dataset:FuzzParse \
	./internal/vocab/thresholds:FuzzParse ./internal/target/profile:FuzzParse \
	./internal/vllmsim/calibration:FuzzParse
FUZZ_EXECS ?= 2000
.PHONY: fuzz
fuzz:
	@for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; name=$${t##*:}; \
	  echo "fuzz: $$name in $$pkg ($(FUZZ_EXECS) inputs)"; \
	  $(GO) test -vet=off -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZ_EXECS)x -parallel 1 $$pkg | tail -n 3; \
	  [ $${PIPESTATUS[0]} = 0 ] || exit 1; \
	done

# No container started by the tests may outlive them.
leak-check:
	@if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then \
	  left=$$(docker ps -aq --filter label=$(LABEL)); \
	  if [ -n "$$left" ]; then echo "leaked containers:"; docker ps -a --filter label=$(LABEL); exit 1; fi; \
	  echo "leak-check: no container labelled $(LABEL) left"; \
	fi

# make llmd: bin/llm-d-inference-sim, the llm-d project's vLLM simulator at
# the version tools/llmd/go.mod pins, static (a third-party server for tests:
# internal/thirdparty/llmd reuses this file; docs/third-party-servers.md).
# A few minutes cold. GOWORK=off: tools/llmd is a module of its own.
LLMD_PKG := github.com/llm-d/llm-d-inference-sim/cmd/llm-d-inference-sim
.PHONY: llmd
llmd:
	@mkdir -p bin
	cd tools/llmd && GOWORK=off CGO_ENABLED=0 $(GO) build -trimpath -o ../../bin/llm-d-inference-sim $(LLMD_PKG)

sim-image:
	CGO_ENABLED=0 $(GO) build -trimpath -o build/sim/vllm-sim ./cmd/vllm-sim
	docker build -t vllmperf/vllm-sim:dev build/sim

clean:
	rm -rf bin build/sim/vllm-sim

# The GitHub workflows, checked by actionlint (a tool dependency in go.mod,
# settings in .github/actionlint.yaml). actionlint checks the run: scripts
# with shellcheck when it is installed; CI=true makes shellcheck required.
.PHONY: lint-workflows
lint-workflows:
	@if ! command -v shellcheck >/dev/null 2>&1; then \
	  if [ "$$CI" = true ]; then echo "lint-workflows: shellcheck is required with CI=true (apt-get install shellcheck)"; exit 1; fi; \
	  echo "lint-workflows: shellcheck is not installed: the workflows' run: scripts are not checked"; \
	fi
	$(GO) tool actionlint
