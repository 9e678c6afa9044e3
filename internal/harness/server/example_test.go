package server_test

import (
	"fmt"
	"strings"

	"github.com/vllmperf/vllmperf/internal/harness/profile"
	"github.com/vllmperf/vllmperf/internal/harness/server"
)

// ExampleBuildRequest shows the container the backend starts for the
// low-latency profile on a GPU runner, without starting it.
func ExampleBuildRequest() {
	p, err := profile.Builtin("low-latency")
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := server.Config{Backend: server.KindContainer, GPUs: "0", HFCache: "/data/hf", HFToken: "hf_example"}
	r, err := server.BuildRequest(cfg, p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Image)
	fmt.Println(strings.Join(append(r.Entrypoint, r.Cmd...), " "))
	fmt.Printf("gpus %v, ipc host %v, cache %s, token %s, ready within %s\n", r.GPUs.IDs, r.IPCHost, r.HFCache, r.Env["HF_TOKEN"], r.StartupTimeout)
	// Output:
	// vllm/vllm-openai:v0.11.0
	// vllm serve Qwen/Qwen3-0.6B --host 0.0.0.0 --port 8000 --dtype float16 --max-num-seqs 16 --max-num-batched-tokens 512 --enable-chunked-prefill --gpu-memory-utilization 0.90 --trust-remote-code
	// gpus [0], ipc host true, cache /data/hf, token [REDACTED], ready within 20m0s
}
