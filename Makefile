# vllmperf — see README.md. The two commands a newcomer needs:
#   make bench   run a short scenario against the embedded simulator and print the summary
#   make test    every test (Docker and promtool tests run when those are present; CI=true makes them required)

GO        ?= go
PKGS      ?= ./...
LABEL     := org.vllmperf.managed=true
BENCH_ARGS ?= --backend sim --profile basic --concurrency 16 --requests 128 --warmup 2 --prompt-tokens 256 --max-tokens 64

SHELL := /bin/bash

.PHONY: all bench run test vet fmt-check unit leak-check build sim-image clean calibrate

all: build

build:
	$(GO) build ./...
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/vllm-sim ./cmd/vllm-sim
	$(GO) build -o bin/vllmperf ./cmd/vllmperf

# make bench: the whole suite (every profile x scenario, quick size) on the
# embedded simulator, into a results folder; then its table and knees.
RESULTS ?= results/$(shell date -u +%Y%m%dT%H%M%SZ)
bench:
	@mkdir -p $(RESULTS)
	set -o pipefail; VLLMPERF_SIZE=$${VLLMPERF_SIZE:-quick} VLLMPERF_RESULTS=$(RESULTS) \
	  $(GO) test -run '^$$' -bench Perf -benchtime 1x -timeout 30m . | tee $(RESULTS)/bench.txt
	$(GO) run ./cmd/vllmperf report $(RESULTS)
	@echo "results: $(RESULTS)"

# make calibrate: replay every calibration row (internal/vllmsim/calibration)
# against the simulator in simulated time (seconds), print the table of
# published vs simulated figures and rewrite it in docs/calibration.md.
calibrate:
	$(GO) test -count=1 -run '^TestCalibration$$' -v ./internal/vllmsim/replay/ -update

# make run: one vllmperf run against the embedded simulator (BENCH_ARGS).
run:
	$(GO) run ./cmd/vllmperf run $(BENCH_ARGS)

test: fmt-check vet unit leak-check

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

# Everything runs under the race detector except the TestTiming* tests, which
# assert millisecond accuracy: they run on their own, without -race,
# after the rest, so that no other package's tests compete for the 2 cores.
unit:
	$(GO) test -race -count=1 -timeout 15m -skip '^TestTiming' $(PKGS)
	$(GO) test -count=1 -timeout 5m -p 1 -run '^TestTiming' $(PKGS)

# No container started by the tests may outlive them.
leak-check:
	@if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then \
	  left=$$(docker ps -aq --filter label=$(LABEL)); \
	  if [ -n "$$left" ]; then echo "leaked containers:"; docker ps -a --filter label=$(LABEL); exit 1; fi; \
	  echo "leak-check: no container labelled $(LABEL) left"; \
	fi

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
