// Package metrics is the simulated engine's Prometheus series, in the
// names, types, labels and buckets of the server family it imitates:
// vLLM V1 (vllm.go, the default) or SGLang (sglang.go, --sim-family
// sglang, after SGLangSource). Both families also serve the simulator's
// own pace series (package simpace). The engine records into one Set
// whatever the family; a series the family does not serve is made but not
// registered.
package metrics
