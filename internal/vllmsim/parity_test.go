package vllmsim

import (
	"reflect"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/metrics"
)

// parityValue is one value of a flag: its text on the command line, the
// same value set in Go, and whether vllm-sim takes it.
type parityValue struct {
	text string                // the flag's value ("a|b": two values); for a boolean flag "" (--flag) or "no" (--no-flag)
	set  func(*config.Options) // the same value in Options; nil when the text does not parse (a command-line syntax error)
	ok   bool                  // accepted
}

// v is a row that parses.
func v(text string, ok bool, set func(*config.Options)) parityValue {
	return parityValue{text: text, set: set, ok: ok}
}

// syntax is a row whose text does not parse: only the command line sees it.
func syntax(text string) parityValue { return parityValue{text: text} }

// parityCases are values of every flag in flagTable, accepted and refused.
var parityCases = map[string][]parityValue{
	"profiler-config": {v(`{"profiler":"torch","torch_profiler_dir":"/traces"}`, true, func(o *config.Options) { o.Profiler = config.ProfilerOptions{Profiler: "torch", Dir: "/traces"} }),
		v(`{"profiler":null}`, true, func(o *config.Options) {}),
		v(`{"profiler":"torch"}`, false, func(o *config.Options) { o.Profiler.Profiler = "torch" }),
		v(`{"torch_profiler_dir":"/traces"}`, false, func(o *config.Options) { o.Profiler.Dir = "/traces" }),
		v(`{"profiler":"cuda"}`, false, func(o *config.Options) { o.Profiler.Profiler = "cuda" }),
		syntax(`{"profiler":"torch","torch_profiler_dir":"/t","bogus":1}`), syntax("torch")},
	"profiler-config.profiler":           {v("torch", false, func(o *config.Options) { o.Profiler.Profiler = "torch" }), v("None", true, func(o *config.Options) {})},
	"profiler-config.torch-profiler-dir": {v("/traces", false, func(o *config.Options) { o.Profiler.Dir = "/traces" })},
	"profiler-config.torch-profiler-use-gzip": {v("false", true, func(o *config.Options) { o.Profiler.NoGzip = true }),
		v("true", true, func(o *config.Options) {}), syntax("maybe")},
	"model": {v("Qwen/Qwen3-0.6B", true, func(o *config.Options) { o.Model = "Qwen/Qwen3-0.6B" }),
		v("org/unknown-7b", true, func(o *config.Options) { o.Model = "org/unknown-7b" }),
		v("", false, func(o *config.Options) { o.Model = "" })},
	"served-model-name": {v("a|b", true, func(o *config.Options) { o.ServedModelNames = []string{"a", "b"} }),
		v(" ", false, func(o *config.Options) { o.ServedModelNames = []string{" "} })},
	"host": {v("0.0.0.0", true, func(o *config.Options) { o.Host = "0.0.0.0" })},
	"port": {v("0", true, func(o *config.Options) { o.Port = 0 }), v("65535", true, func(o *config.Options) { o.Port = 65535 }),
		v("65536", false, func(o *config.Options) { o.Port = 65536 }), v("-1", false, func(o *config.Options) { o.Port = -1 }), syntax("http")},
	"api-key": {v("k-1", true, func(o *config.Options) { o.APIKey = "k-1" })},
	"max-num-seqs": {v("0", true, func(o *config.Options) { o.MaxNumSeqs = 0 }), v("64", true, func(o *config.Options) { o.MaxNumSeqs = 64 }),
		v("-1", false, func(o *config.Options) { o.MaxNumSeqs = -1 }), v("4096", false, func(o *config.Options) { o.MaxNumSeqs = 4096 }), syntax("many")},
	"max-num-batched-tokens": {v("0", true, func(o *config.Options) { o.MaxNumBatchedTokens = 0 }), v("4096", true, func(o *config.Options) { o.MaxNumBatchedTokens = 4096 }),
		v("-1", false, func(o *config.Options) { o.MaxNumBatchedTokens = -1 }), v("1", false, func(o *config.Options) { o.MaxNumBatchedTokens = 1 }), syntax("lots")},
	"max-model-len": {v("4K", true, func(o *config.Options) { o.MaxModelLen = 4096 }), v("4.5k", true, func(o *config.Options) { o.MaxModelLen = 4500 }),
		v("0", true, func(o *config.Options) { o.MaxModelLen = 0 }), v("-1", false, func(o *config.Options) { o.MaxModelLen = -1 }),
		v("100000", false, func(o *config.Options) { o.MaxModelLen = 100000 }), syntax("long")},
	"block-size": {v("16", true, func(o *config.Options) { o.BlockSize = 16 }), v("128", true, func(o *config.Options) { o.BlockSize = 128 }),
		v("12", false, func(o *config.Options) { o.BlockSize = 12 }), v("0", false, func(o *config.Options) { o.BlockSize = 0 }), syntax("big")},
	"gpu-memory-utilization": {v("0.9", true, func(o *config.Options) { o.GPUMemoryUtilization = 0.9 }), v("1", true, func(o *config.Options) { o.GPUMemoryUtilization = 1 }),
		v("0", false, func(o *config.Options) { o.GPUMemoryUtilization = 0 }), v("1.5", false, func(o *config.Options) { o.GPUMemoryUtilization = 1.5 }),
		v("-0.1", false, func(o *config.Options) { o.GPUMemoryUtilization = -0.1 }), syntax("nan"), syntax("most")},
	"dtype": {v("auto", true, func(o *config.Options) { o.Dtype = "auto" }), v("half", true, func(o *config.Options) { o.Dtype = "half" }),
		v("float16", true, func(o *config.Options) { o.Dtype = "float16" }), v("bfloat16", true, func(o *config.Options) { o.Dtype = "bfloat16" }),
		v("float", true, func(o *config.Options) { o.Dtype = "float" }), v("float32", true, func(o *config.Options) { o.Dtype = "float32" }),
		v("bf16", false, func(o *config.Options) { o.Dtype = "bf16" }), v("fp16", false, func(o *config.Options) { o.Dtype = "fp16" }),
		v("BFLOAT16", false, func(o *config.Options) { o.Dtype = "BFLOAT16" }), v("int4", false, func(o *config.Options) { o.Dtype = "int4" })},
	"api-server-count": {v("1", true, func(o *config.Options) { o.APIServerCount = 1 }), v("4", true, func(o *config.Options) { o.APIServerCount = 4 }),
		v("0", false, func(o *config.Options) { o.APIServerCount = 0 }), v("1025", false, func(o *config.Options) { o.APIServerCount = 1025 }), syntax("some")},
	"tokenizer-mode": {v("mistral", true, func(o *config.Options) { o.TokenizerMode = "mistral" }), v("auto", true, func(o *config.Options) { o.TokenizerMode = "auto" }),
		v("fast", false, func(o *config.Options) { o.TokenizerMode = "fast" })},
	"kv-cache-dtype": {v("auto", true, func(o *config.Options) { o.KVCacheDtype = "auto" }), v("bfloat16", true, func(o *config.Options) { o.KVCacheDtype = "bfloat16" }),
		v("fp8", true, func(o *config.Options) { o.KVCacheDtype = "fp8" }), v("fp8_e4m3", true, func(o *config.Options) { o.KVCacheDtype = "fp8_e4m3" }),
		v("fp8_e5m2", true, func(o *config.Options) { o.KVCacheDtype = "fp8_e5m2" }), v("fp8_inc", true, func(o *config.Options) { o.KVCacheDtype = "fp8_inc" }),
		v("fp8_ds_mla", false, func(o *config.Options) { o.KVCacheDtype = "fp8_ds_mla" }), v("fp4", false, func(o *config.Options) { o.KVCacheDtype = "fp4" })},
	"long-prefill-token-threshold": {v("0", true, func(o *config.Options) { o.LongPrefillTokenThreshold = 0 }),
		v("256", true, func(o *config.Options) { o.LongPrefillTokenThreshold = 256 }), v("-1", false, func(o *config.Options) { o.LongPrefillTokenThreshold = -1 })},
	"enable-prefix-caching":  {v("", true, func(o *config.Options) { o.EnablePrefixCaching = true }), v("no", true, func(o *config.Options) { o.EnablePrefixCaching = false })},
	"enable-chunked-prefill": {v("", true, func(o *config.Options) { o.EnableChunkedPrefill = true }), v("no", true, func(o *config.Options) { o.EnableChunkedPrefill = false })},
	"speculative-config": {v(`{"method":"ngram","num_speculative_tokens":3}`, true, func(o *config.Options) { o.SpeculativeConfig = `{"method":"ngram","num_speculative_tokens":3}` }),
		v("{ngram}", false, func(o *config.Options) { o.SpeculativeConfig = "{ngram}" }),
		v(`{"method":"magic","num_speculative_tokens":2}`, false, func(o *config.Options) { o.SpeculativeConfig = `{"method":"magic","num_speculative_tokens":2}` })},
	"tensor-parallel-size": {v("1", true, func(o *config.Options) { o.TensorParallelSize = 1 }), v("2", true, func(o *config.Options) { o.TensorParallelSize = 2 }),
		v("3", false, func(o *config.Options) { o.TensorParallelSize = 3 }), v("0", false, func(o *config.Options) { o.TensorParallelSize = 0 }),
		v("1025", false, func(o *config.Options) { o.TensorParallelSize = 1025 }), syntax("two")},
	"trust-remote-code":               {v("", true, func(o *config.Options) { o.TrustRemoteCode = true }), v("no", true, func(o *config.Options) { o.TrustRemoteCode = false })},
	"seed":                            {v("42", true, func(o *config.Options) { o.SamplingSeed = 42 }), v("-1", true, func(o *config.Options) { o.SamplingSeed = -1 }), syntax("x")},
	"swap-space":                      {v("4", true, func(o *config.Options) { o.SwapSpace = 4 }), v("0", true, func(o *config.Options) { o.SwapSpace = 0 }), v("-1", false, func(o *config.Options) { o.SwapSpace = -1 }), syntax("lots")},
	"disable-log-requests":            {v("", true, func(o *config.Options) { o.LogRequests = false })},
	"enable-log-requests":             {v("", true, func(o *config.Options) { o.LogRequests = true }), v("no", true, func(o *config.Options) { o.LogRequests = false })},
	"disable-log-stats":               {v("", true, func(o *config.Options) { o.DisableLogStats = true }), v("no", true, func(o *config.Options) { o.DisableLogStats = false })},
	"enforce-eager":                   {v("", true, func(o *config.Options) { o.EnforceEager = true }), v("no", true, func(o *config.Options) { o.EnforceEager = false })},
	"show-hidden-metrics-for-version": {v("0.9", true, func(o *config.Options) { o.ShowHiddenMetrics = "0.9" })},
	"sim-eos-prob": {v("0.02", true, func(o *config.Options) { o.EOSProbability = 0.02 }), v("1", true, func(o *config.Options) { o.EOSProbability = 1 }),
		v("1.5", false, func(o *config.Options) { o.EOSProbability = 1.5 }), v("-0.1", false, func(o *config.Options) { o.EOSProbability = -0.1 }), syntax("often")},
	"sim-gpu": {v("h100", true, func(o *config.Options) { o.GPU = "h100" }), v("H100", true, func(o *config.Options) { o.GPU = "H100" }),
		v("tpu-v9", false, func(o *config.Options) { o.GPU = "tpu-v9" }), v("", false, func(o *config.Options) { o.GPU = "" })},
	"sim-seed":        {v("7", true, func(o *config.Options) { o.Seed = 7 }), syntax("seven")},
	"sim-output-salt": {v("7", true, func(o *config.Options) { o.OutputSalt = 7 }), v("-3", true, func(o *config.Options) { o.OutputSalt = -3 }), syntax("salty")},
	"sim-jitter": {v("0.1", true, func(o *config.Options) { o.Jitter = 0.1 }), v("1.5", false, func(o *config.Options) { o.Jitter = 1.5 }),
		v("-0.1", false, func(o *config.Options) { o.Jitter = -0.1 })},
	"sim-slowdown": {v("1.1", true, func(o *config.Options) { o.Slowdown = 1.1 }), v("0", false, func(o *config.Options) { o.Slowdown = 0 }),
		v("-1", false, func(o *config.Options) { o.Slowdown = -1 }), v("2e6", false, func(o *config.Options) { o.Slowdown = 2e6 })},
	"sim-cold-start": {v("0", true, func(o *config.Options) { o.ColdStart = 0 }), v("100ms", true, func(o *config.Options) { o.ColdStart = 100 * time.Millisecond }),
		v("-1s", false, func(o *config.Options) { o.ColdStart = -time.Second }), syntax("5")},
	"sim-guided-decoding-overhead": {v("0", true, func(o *config.Options) { o.GuidedOverhead = 0 }), v("2ms", true, func(o *config.Options) { o.GuidedOverhead = 2 * time.Millisecond }),
		v("-1ms", false, func(o *config.Options) { o.GuidedOverhead = -time.Millisecond }), syntax("5")},
	"sim-startup":    {v("1s", true, func(o *config.Options) { o.Startup = time.Second }), v("-1s", false, func(o *config.Options) { o.Startup = -time.Second })},
	"sim-fixed-ttft": {v("0", true, func(o *config.Options) { o.FixedTTFT = 0 }), v("5ms", false, func(o *config.Options) { o.FixedTTFT = 5 * time.Millisecond }), v("-1ms", false, func(o *config.Options) { o.FixedTTFT = -time.Millisecond })},
	"sim-fixed-itl":  {v("0", true, func(o *config.Options) { o.FixedITL = 0 }), v("1ms", false, func(o *config.Options) { o.FixedITL = time.Millisecond }), v("-1ms", false, func(o *config.Options) { o.FixedITL = -time.Millisecond })},
	"sim-vllm-version": {v("0.9.2", true, func(o *config.Options) { o.Release = "0.9.2" }), v("0.10.1.1", true, func(o *config.Options) { o.Release = "0.10.1.1" }),
		v("0.11", true, func(o *config.Options) { o.Release = "0.11" }), v("v0.11.0", false, func(o *config.Options) { o.Release = "v0.11.0" }),
		v("latest", false, func(o *config.Options) { o.Release = "latest" })},
	"sim-metrics-version": {v("current", true, func(o *config.Options) { o.MetricsVersion = engine.MetricsCurrent }), v("0.9", true, func(o *config.Options) { o.MetricsVersion = engine.MetricsV09 }),
		v("0.7", false, func(o *config.Options) { o.MetricsVersion = "0.7" })},
	"sim-family": {v("vllm", true, func(o *config.Options) { o.Family = metrics.VLLM }), v("sglang", true, func(o *config.Options) { o.Family = metrics.SGLang }),
		v("tgi", false, func(o *config.Options) { o.Family = "tgi" })},
	"sim-fault-500-rate": {v("0.1", true, func(o *config.Options) { o.Faults.Rate500 = 0.1 }), v("1.5", false, func(o *config.Options) { o.Faults.Rate500 = 1.5 }),
		v("-0.1", false, func(o *config.Options) { o.Faults.Rate500 = -0.1 }), syntax("half")},
	"sim-fault-429-rate": {v("0.1", true, func(o *config.Options) { o.Faults.Rate429 = 0.1 }), v("2", false, func(o *config.Options) { o.Faults.Rate429 = 2 })},
	"sim-fault-disconnect-rate": {v("0.1", true, func(o *config.Options) { o.Faults.DisconnectRate = 0.1 }),
		v("-0.1", false, func(o *config.Options) { o.Faults.DisconnectRate = -0.1 })},
	"sim-fault-stall": {v("0", true, func(o *config.Options) { o.Faults.Stall = 0 }), v("2s", false, func(o *config.Options) { o.Faults.Stall = 2 * time.Second }),
		v("-1s", false, func(o *config.Options) { o.Faults.Stall = -time.Second })},
	"sim-fault-stall-rate": {v("0", true, func(o *config.Options) { o.Faults.StallRate = 0 }), v("0.5", false, func(o *config.Options) { o.Faults.StallRate = 0.5 })},
	"sim-fault-usage-skew": {v("3", true, func(o *config.Options) { o.Faults.UsageSkew = 3 }), v("-3", true, func(o *config.Options) { o.Faults.UsageSkew = -3 }), syntax("some")},
	"sim-fault-metrics-delay": {v("1s", true, func(o *config.Options) { o.Faults.MetricsDelay = time.Second }),
		v("-1s", false, func(o *config.Options) { o.Faults.MetricsDelay = -time.Second })},
	"sim-fault-metrics-malformed": {v("", true, func(o *config.Options) { o.Faults.MetricsBroken = true })},
	"sim-fault-drop-metric": {v("vllm:kv_cache_usage_perc", true, func(o *config.Options) { o.Faults.DropMetrics = []string{"vllm:kv_cache_usage_perc"} }),
		v("vllm:prompt_tokens_total,vllm:num_requests_running", true, func(o *config.Options) {
			o.Faults.DropMetrics = []string{"vllm:prompt_tokens_total", "vllm:num_requests_running"}
		}),
		v("vllm:nope", false, func(o *config.Options) { o.Faults.DropMetrics = []string{"vllm:nope"} }),
		v(",", false, func(o *config.Options) { o.Faults.DropMetrics = []string{"", ""} })},
	"sim-fault-restart-after": {v("2", true, func(o *config.Options) { o.Faults.RestartAfter = 2 }), v("-1", false, func(o *config.Options) { o.Faults.RestartAfter = -1 })},
	"sim-fault-die-after":     {v("2", true, func(o *config.Options) { o.Faults.DieAfter = 2 }), v("-1", false, func(o *config.Options) { o.Faults.DieAfter = -1 })},
}

// startErr starts a server from args or from opts, and returns New's error.
func startErr(start func() (*Server, error)) error {
	s, err := start()
	if err == nil {
		_ = s.Close()
	}
	return err
}

// errText is err's message, or "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestFlagsAndOptionsAgree gives every flag in the flag table values it must
// take and values it must refuse, once on the command line (New) and once
// in Go (NewWithOptions, and engine.Start where only the engine's fields
// change), and checks that all paths accept the same values and refuse
// the others with the same message.
func TestFlagsAndOptionsAgree(t *testing.T) {
	t.Parallel()
	for _, name := range config.FlagNames() {
		rows, ok := parityCases[name]
		if !ok {
			t.Errorf("--%s has no rows in parityCases: add values it takes and refuses", name)
			continue
		}
		for _, row := range rows {
			args := config.ArgsFor(name, row.text)
			flagErr := startErr(func() (*Server, error) { return New(args, nil) })
			if row.set == nil {
				if flagErr == nil {
					t.Errorf("%q: accepted, want a syntax error", args)
				}
				continue
			}
			if (flagErr == nil) != row.ok {
				t.Errorf("%q: err %v, want accepted=%v", args, flagErr, row.ok)
			}
			opts := config.DefaultOptions()
			row.set(&opts)
			optErr := startErr(func() (*Server, error) { return NewWithOptions(opts, nil) })
			if errText(optErr) != errText(flagErr) {
				t.Errorf("%q: by flag %q, by Options %q", args, errText(flagErr), errText(optErr))
			}
			onlyEngine := opts
			onlyEngine.Config = config.DefaultOptions().Config
			if !reflect.DeepEqual(onlyEngine, config.DefaultOptions()) {
				continue
			}
			eng, engErr := engine.Start(opts.Config, prometheus.NewRegistry())
			if engErr == nil {
				eng.Close()
			}
			if (engErr == nil) != row.ok || errText(config.EngineArgError(opts.Config.Validate())) != errText(flagErr) {
				t.Errorf("%q: by flag %q, by engine.Config %v (Validate %v)", args, errText(flagErr), engErr, opts.Config.Validate())
			}
		}
	}
}
