// Package llmd runs llm-d-inference-sim, the llm-d project's vLLM simulator
// (github.com/llm-d/llm-d-inference-sim), at the release tools/llmd/go.mod
// pins: a vLLM-compatible server that vllmperf did not write, for tests
// that check vllmperf against a server other than vLLM and its own
// simulator. What it exposes differently from vLLM, and how vllmperf
// handles it: docs/third-party-servers.md.
//
//   - Binary builds the simulator (static, CGO_ENABLED=0, once per process;
//     kept as bin/llm-d-inference-sim in the checkout, the file `make llmd`
//     writes, and reused while its build information shows Version), or
//     returns VLLMPERF_LLMD_BINARY.
//   - Start runs it on a free loopback port, offline, and waits until it
//     answers; StartT does so for a test (skipped where it cannot be built,
//     failed under CI=true) and stops it at the test's end.
//   - Image puts it in a FROM scratch image, ImageRef, for the container
//     backend's image entrypoint (server.WithEntrypoint("image")).
//
// Offline: unless OfflineFlag (--force-dummy-tokenizer) is given, the
// simulator asks https://huggingface.co/api/models/MODEL whether the model
// exists, to pick a tokenizer. Start passes the flag before the caller's
// arguments, and the image's ENTRYPOINT carries it. Nothing else in the
// default configuration leaves the machine: KV-cache events (ZMQ, to
// tcp://127.0.0.1:5557 by default) are sent only with --enable-kvcache, a
// dataset is downloaded only with --dataset-url. The simulator has no
// --host: it listens on every IPv4 interface; Start reaches it on
// 127.0.0.1 only.
//
// # Exported names and their users
//
//   - Binary, Start, StartT, Process: this package's tests and tests of
//     vllmperf against a third-party server.
//   - Image, ImageRef: internal/target/server's container test of the
//     image entrypoint.
//   - Version, Package, EnvBinary, OfflineFlag: the docs and error
//     messages; tools/llmd/go.mod is checked against Version by the tests.
package llmd

import (
	"os"
	"testing"

	"github.com/vllmperf/vllmperf/internal/vocab/cliarg"
)

const (
	// Version is the llm-d-inference-sim release tools/llmd/go.mod pins.
	// A binary whose build information shows another version is rebuilt;
	// the tests fail when go.mod and Version disagree.
	Version = "v0.10.2"
	// ModulePath is llm-d-inference-sim's Go module.
	ModulePath = "github.com/llm-d/llm-d-inference-sim"
	// Package is its main package, the tool of tools/llmd/go.mod.
	Package = ModulePath + "/cmd/llm-d-inference-sim"
	// EnvBinary names a prebuilt llm-d-inference-sim that Binary returns
	// instead of building one (any directory; `make llmd` writes one to
	// bin/llm-d-inference-sim). For Image it must be a static Linux
	// executable for this machine's architecture.
	EnvBinary = "VLLMPERF_LLMD_BINARY"
	// DefaultModel is the model Start serves when the arguments name none
	// (--model): any name works, nothing is downloaded.
	DefaultModel = "Qwen/Qwen3-0.6B"
)

// OfflineFlag keeps the simulator off the network: without it, it asks
// huggingface.co whether the model exists (to pick a tokenizer). With
// it, tokens are the simulator's own: a word or a punctuation mark
// each, not the model's tokenizer.
var OfflineFlag = cliarg.ForceDummyTokenizer.Arg()

// envCI is set to "true" on CI, where a missing binary or Docker engine
// fails a test instead of skipping it.
const envCI = "CI"

// unavailable skips tb because what it needs is missing (the reason in
// err), or fails it under CI=true, where everything must be there.
func unavailable(tb testing.TB, what string, err error) {
	tb.Helper()
	if os.Getenv(envCI) == "true" {
		tb.Fatalf("%s is required under CI=true: %v", what, err)
	}
	tb.Skipf("%s is not available, test skipped (with CI=true it fails): %v", what, err)
}
