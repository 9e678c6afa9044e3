package vllmsim

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
)

// logger writes vLLM-style lines: "INFO 12-02 16:45:53 [vllm-sim] message".
type logger struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *logger) printf(level, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	msg = strings.TrimRight(msg, "\n")
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "%s %s [vllm-sim] %s\n", level, time.Now().Format("01-02 15:04:05"), msg)
}

func (l *logger) infof(format string, a ...any)  { l.printf("INFO", format, a...) }
func (l *logger) warnf(format string, a ...any)  { l.printf("WARNING", format, a...) }
func (l *logger) errorf(format string, a ...any) { l.printf("ERROR", format, a...) }

// logWriter adapts logger to the standard library's log.Logger (the HTTP
// server's own messages, at WARNING).
type logWriter struct{ l *logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.l.warnf("%s", p)
	return len(p), nil
}

// gib is bytes per GiB, vLLM's GiB_bytes.
const gib = 1 << 30

// logEngine writes the start-up lines about the engine: the arguments in
// effect (the API key redacted) and, as vLLM V1 logs them, the memory left
// for the KV cache (gpu_worker.py: "Available KV cache memory: %.2f GiB"),
// the KV cache's size and the concurrency it allows.
func (s *Server) logEngine() {
	info := s.info
	s.log.infof("args: %s", redactedArgs(s.opts, info))
	if info.ModelNote != "" {
		s.log.warnf("%s", info.ModelNote)
	}
	s.log.infof("Available KV cache memory: %.2f GiB", float64(info.KVCacheBytes)/gib)
	s.log.infof("GPU KV cache size: %d tokens (%d blocks of %d)", info.KVCacheTokens, info.NumGPUBlocks, info.BlockSize)
	s.log.infof("Maximum concurrency for %d tokens per request: %.2fx", info.Config.MaxModelLen, float64(info.KVCacheTokens)/float64(info.Config.MaxModelLen))
}

// redactedArgs renders the options for the start-up log with the engine's
// effective settings (derived sizes filled in), the API key replaced by a
// marker.
func redactedArgs(o config.Options, info engine.Info) string {
	c := info.Config
	key := "None"
	if o.APIKey != "" {
		key = "'<redacted>'"
	}
	return fmt.Sprintf("model=%q served_model_name=%q host=%s port=%d api_key=%s max_num_seqs=%d max_num_batched_tokens=%d max_model_len=%d block_size=%d gpu_memory_utilization=%g dtype=%s kv_cache_dtype=%s enable_prefix_caching=%t enable_chunked_prefill=%t tensor_parallel_size=%d speculative_config=%q sim_gpu=%s sim_seed=%d sim_startup=%s faults=%+v",
		c.Model, c.ServedNames(), o.Host, o.Port, key, c.MaxNumSeqs, c.MaxNumBatchedTokens, c.MaxModelLen,
		c.BlockSize, c.GPUMemoryUtilization, c.Dtype, c.KVCacheDtype, c.EnablePrefixCaching, c.EnableChunkedPrefill,
		c.TensorParallelSize, c.SpeculativeConfig, c.GPU, c.Seed, o.Startup, o.Faults)
}
