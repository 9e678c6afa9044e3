// Package server starts a vLLM server for a profile and hands back its
// endpoints, in the shape of a testcontainers-go module: Run(ctx, profile,
// opts...) applies its defaults, then the options in order, and returns a
// Server with endpoint methods. Three backends:
//
//   - sim (the default): the project's simulator (internal/vllmsim), in
//     this process; needs nothing.
//   - container: a container started through testcontainers-go: a real
//     vllm/vllm-openai image on GPU runners, or (WithImage(SimImage)) the
//     simulator in a FROM scratch image (build/sim), so that CI exercises
//     the same code path end to end. The simulator image is built from an
//     embedded Dockerfile and VLLMPERF_SIM_BINARY (any directory) or the
//     checkout, and reused when it exists. The command line has three
//     layouts (WithEntrypoint, VLLMPERF_ENTRYPOINT): serve (`vllm serve
//     MODEL --host 0.0.0.0 --port 8000 FLAGS...`, the default), api_server
//     (`python3 -m vllm.entrypoints.openai.api_server --model MODEL ...`,
//     old vLLM images) and image (the image's own ENTRYPOINT with `--model
//     MODEL --port 8000 FLAGS...`: a vLLM-compatible server that is not
//     vLLM, such as llm-d-inference-sim, internal/thirdparty/llmd).
//   - external: an existing deployment (e.g. a vLLM fleet on Kubernetes);
//     nothing is started or stopped.
//
// Settings come from the environment (FromEnv, as options) and from the
// caller's options after them. Every error from Run reads "start vllm:
// ..."; settings errors wrap ErrSettings, a missing Docker engine
// ErrNoDocker. Secrets (HF_TOKEN, the API key) never appear in logs or
// errors. The package sets no environment variable: containers are waited
// for on loopback, where their port is published, so
// TESTCONTAINERS_HOST_OVERRIDE is not needed; where testcontainers'
// reaper cannot run, the error says to set TESTCONTAINERS_RYUK_DISABLED=true.
//
// # Exported names and their users
//
//   - Run, Option, FromEnv, WithBackend, WithTarget, WithImage, WithModel,
//     WithAPIKey, WithLog: cmd/vllmperf (run.go: flags over the
//     environment), perf_test.go (startProfile), the suite.
//   - WithEntrypoint (and simbuild.Build): internal/thirdparty/llmd and its tests
//     (the llm-d-inference-sim image, built FROM scratch like the
//     simulator's, run with the image entrypoint).
//   - Server (BaseURL, MetricsURL, Model, ReadyIn, Logs, Describe, Close),
//     Description: cmd/vllmperf, perf_test.go, the suite (Describe gives
//     its benchfmt configuration lines).
//   - Kind, KindSim, KindContainer, KindExternal, ParseKind: cmd/vllmperf
//     (--backend, --target, --image).
//   - ErrSettings: cmd/vllmperf (exit status 2 for bad settings).
//   - ParseTarget, WithWaitReady, ErrKeyRejected, ErrUnhealthy:
//     cmd/vllmperf (--target checked and cut back to the base URL before
//     anything starts, --wait-ready, the refused key named by its
//     variable, the pointer to --wait-ready).
//   - Probe, DownError, ErrServerDown: package pipeline (a server that died
//     during a run, with its last logs: Result.ServerDown).
//   - ErrNoDocker, DockerAvailable: perf_test.go and cmd/vllmperf's
//     tests (skip without Docker, fail under CI=true).
//   - DefaultImage, SimImage: docs/gpu-runners.md, cmd/vllmperf (--image
//     sim).
package server
