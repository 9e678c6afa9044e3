package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

func TestParseArgsAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		args  []string
		check func(o Options) bool
	}{
		// No arguments: vLLM's default model, served under its own name.
		{"defaults", nil, func(o Options) bool {
			return o.Model == presets.DefaultModel && slices.Equal(o.ServedNames(), []string{presets.DefaultModel}) && o.Host == "127.0.0.1" && o.Port == 8000 && o.EnablePrefixCaching && o.EnableChunkedPrefill
		}},
		// The model as vllm serve's positional argument (an 8B model's full
		// context needs more KV cache than the default 24 GiB GPU holds).
		{"positional model", []string{"Qwen/Qwen3-8B", "--sim-gpu", "h100"}, func(o Options) bool { return o.Model == "Qwen/Qwen3-8B" }},
		// The old api_server spelling --model.
		{"--model flag", []string{"--model", "m1"}, func(o Options) bool { return o.Model == "m1" }},
		// --flag=value and --flag value mix.
		{"equals form", []string{"--max-num-seqs=64", "--max-num-batched-tokens", "4096"}, func(o Options) bool {
			return o.MaxNumSeqs == 64 && o.MaxNumBatchedTokens == 4096
		}},
		// vLLM accepts underscores for dashes.
		{"underscores", []string{"--max_num_seqs", "16"}, func(o Options) bool { return o.MaxNumSeqs == 16 }},
		// nargs=+ takes every following non-flag word.
		{"several served names", []string{"m", "--served-model-name", "a", "b", "--port", "9"}, func(o Options) bool {
			return slices.Equal(o.ServedModelNames, []string{"a", "b"}) && o.Port == 9 && o.Model == "m"
		}},
		// BooleanOptionalAction's negative form.
		{"no-enable flags", []string{"--no-enable-prefix-caching", "--no-enable-chunked-prefill"}, func(o Options) bool {
			return !o.EnablePrefixCaching && !o.EnableChunkedPrefill
		}},
		// -tp is argparse's short alias of --tensor-parallel-size.
		{"-tp", []string{"-tp", "2"}, func(o Options) bool { return o.TensorParallelSize == 2 }},
		// Human-readable context length: k = 1000, K = 1024.
		{"max-model-len 4K", []string{"--max-model-len", "4K"}, func(o Options) bool { return o.MaxModelLen == 4096 }},
		// The seed article's high-throughput command line, verbatim.
		{"seed article flags", strings.Fields("--model /root/models/Qwen3-0.6B --port 8000 --dtype float16 --max-model-len 4096 --max-num-seqs 64 --max-num-batched-tokens 4096 --gpu-memory-utilization 0.92 --enable-prefix-caching --trust-remote-code"), func(o Options) bool {
			return o.Dtype == "float16" && o.GPUMemoryUtilization == 0.92 && o.TrustRemoteCode
		}},
		// Speculative decoding JSON is validated and passed through.
		{"speculative config", []string{"--speculative-config", `{"method":"ngram","num_speculative_tokens":5}`}, func(o Options) bool {
			return strings.Contains(o.SpeculativeConfig, "ngram")
		}},
		// Simulator durations and fault rates.
		{"sim flags", []string{"--sim-startup", "1.5s", "--sim-fault-stall", "2s", "--sim-fault-stall-rate", "0.5", "--sim-fault-500-rate", "0", "--sim-metrics-version", "0.9"}, func(o Options) bool {
			return o.Startup == 1500*time.Millisecond && o.Faults.Stall == 2*time.Second && o.Faults.StallRate == 0.5 && o.MetricsVersion == engine.MetricsV09
		}},
		// EOS probability for stop-terminated requests.
		{"eos prob", []string{"--sim-eos-prob", "0.02"}, func(o Options) bool { return o.EOSProbability == 0.02 }},
		// The API key is stored (and only redacted in logs).
		{"api key", []string{"--api-key", "sekrit"}, func(o Options) bool { return o.APIKey == "sekrit" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o, err := ParseArgs(tt.args)
			if err != nil {
				t.Fatalf("ParseArgs(%q): %v", tt.args, err)
			}
			if !tt.check(o) {
				t.Errorf("ParseArgs(%q) = %+v: check failed", tt.args, o)
			}
		})
	}
}

func TestParseArgsRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string // a substring of the error
	}{
		// The brief's example: a typo gets argparse's message and a suggestion.
		{"typo", []string{"--max-num-seq", "8"}, "unrecognized arguments: --max-num-seq 8 (see --help; did you mean --max-num-seqs?)"},
		// A flag vLLM never had, no suggestion.
		{"unknown", []string{"--frobnicate"}, "unrecognized arguments: --frobnicate (see --help)"},
		// Two positional models.
		{"two models", []string{"a", "b"}, "unrecognized arguments: b"},
		// A value flag at the end of the line.
		{"missing value", []string{"--port"}, "argument --port: expected one argument"},
		// Not a number.
		{"bad int", []string{"--max-num-seqs", "many"}, "argument --max-num-seqs: invalid int value: 'many'"},
		// A negative count of sequences (0 is the GPU's default, as in engine.Config).
		{"negative seqs", []string{"--max-num-seqs", "-1"}, "argument --max-num-seqs: -1 is out of range: want an integer >= 0"},
		// GPU memory share above 1.
		{"gpu util", []string{"--gpu-memory-utilization", "1.5"}, "argument --gpu-memory-utilization: 1.5 is out of range"},
		// argparse choices.
		{"bad dtype", []string{"--dtype", "int4"}, "argument --dtype: invalid choice: 'int4'"},
		// Block sizes are a fixed set.
		{"bad block size", []string{"--block-size", "12"}, "argument --block-size: invalid choice: '12'"},
		// Rates are probabilities.
		{"rate above 1", []string{"--sim-fault-500-rate", "1.5"}, "argument --sim-fault-500-rate: rate 1.5 is out of range"},
		// Negative rate.
		{"negative rate", []string{"--sim-fault-disconnect-rate=-0.1"}, "argument --sim-fault-disconnect-rate: rate -0.1 is out of range"},
		// A duration needs a unit.
		{"bare duration", []string{"--sim-startup", "5"}, "argument --sim-startup: invalid duration: '5'"},
		// Durations cannot be negative.
		{"negative duration", []string{"--sim-fault-stall=-1s"}, "argument --sim-fault-stall: negative duration"},
		// A stall rate without a stall length does nothing: say so.
		{"stall rate alone", []string{"--sim-fault-stall-rate", "0.2"}, "has no effect without --sim-fault-stall"},
		// 500 and 429 shares are exclusive outcomes.
		{"rates over 1", []string{"--sim-fault-500-rate", "0.6", "--sim-fault-429-rate", "0.6"}, "add up to more than 1"},
		// Store-true flags take no value.
		{"bool with value", []string{"--trust-remote-code=yes"}, "ignored explicit argument 'yes'"},
		// Speculative config must be JSON.
		{"bad json", []string{"--speculative-config", "{ngram}"}, "argument --speculative-config: invalid JSON object"},
		// nargs=+ needs at least one name.
		{"served name empty", []string{"--served-model-name", "--port", "1"}, "expected at least one argument"},
		// Model given twice, differently.
		{"model twice", []string{"a", "--model", "b"}, "the model is given twice"},
		// Exact timing needs both fixed durations.
		{"fixed ttft alone", []string{"--sim-fixed-ttft", "5ms"}, "go together"},
		// Port out of range.
		{"port", []string{"--port", "70000"}, "argument --port: 70000 is out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseArgs(tt.args)
			var ae *ArgError
			if !errors.As(err, &ae) {
				t.Fatalf("ParseArgs(%q) = %v, want an *ArgError", tt.args, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseArgs(%q) error %q\nwant it to contain %q", tt.args, err, tt.want)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	if _, err := ParseArgs([]string{"m", "--help"}); !errors.Is(err, ErrHelp) {
		t.Fatalf("--help: got %v, want ErrHelp", err)
	}
	u := Usage()
	for _, f := range flagTable {
		if !strings.Contains(u, "--"+f.name) {
			t.Errorf("Usage() does not list --%s", f.name)
		}
	}
}
