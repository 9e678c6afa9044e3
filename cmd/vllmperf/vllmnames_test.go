package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/testphase"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// TestRunVLLMNames runs `vllmperf run` as a vllm bench serve user would,
// against the simulator on loopback: vLLM's flag names, --max-concurrency
// alone (vLLM's default --request-rate inf), --num-prompts without a data
// set, and --results writes the suite's folder with report.html and a
// bench.txt the gate reads; --save-result names its file as vLLM does and
// --goodput takes vLLM's space-separated form.
func TestRunVLLMNames(t *testing.T) {
	testphase.Alone(t)
	t.Parallel()
	base := startSim(t)
	dir := filepath.Join(t.TempDir(), "results")
	saved := t.TempDir()
	args := []string{"run", "--quiet", "--base-url", base, "--model", "Qwen/Qwen3-0.6B", "--max-concurrency", "4", "--num-prompts", "20",
		"--random-input-len", "64", "--random-output-len", "8", "--results", dir,
		"--save-result", "--result-dir", saved, "--goodput", "ttft:5000", "tpot:1000",
		"--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles", "25,75"}
	var out, errOut bytes.Buffer
	if err := run(t.Context(), &out, &errOut, args); err != nil {
		t.Fatalf("vllmperf %v: %v\nstderr: %s", args, err, errOut.String())
	}
	for _, f := range []string{"report.html", "report.md", "summary.json", "samples.jsonl", "bench.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("--results: %v", err)
		}
	}
	in, err := input.ReadFile(filepath.Join(dir, "bench.txt"))
	if err != nil {
		t.Fatalf("the folder's bench.txt: %v", err)
	}
	if n := len(in.Results); n != 1 || in.Results[0].Name.String() != "Perf/profile=external/scenario=run/rate=inf/cap=4" {
		t.Errorf("bench.txt has %d results, want 1 named Perf/profile=external/scenario=run/rate=inf/cap=4: %v", n, in.Results)
	}
	files, err := filepath.Glob(filepath.Join(saved, "*.json"))
	if err != nil || len(files) != 1 {
		t.Fatalf("--save-result wrote %v (%v), want one file", files, err)
	}
	if name := filepath.Base(files[0]); !regexp.MustCompile(`^openai-chat-infqps-concurrency4-Qwen3-0\.6B-\d{8}-\d{6}\.json$`).MatchString(name) {
		t.Errorf("--save-result's file %s: want vLLM's name openai-chat-infqps-concurrency4-Qwen3-0.6B-YYYYmmdd-HHMMSS.json", name)
	}
	var got struct {
		NumPrompts     int      `json:"num_prompts"`
		MaxConcurrency int      `json:"max_concurrency"`
		Completed      int      `json:"completed"`
		Goodput        *float64 `json:"request_goodput"`
		P25TTFT        *float64 `json:"p25_ttft_ms"`
		P75E2EL        *float64 `json:"p75_e2el_ms"`
	}
	data, err := os.ReadFile(files[0])
	if err == nil {
		err = json.Unmarshal(data, &got)
	}
	if err != nil || got.NumPrompts != 20 || got.MaxConcurrency != 4 || got.Completed != 20 || got.Goodput == nil || *got.Goodput <= 0 {
		t.Errorf("--save-result's JSON: %+v (%v), want 20 prompts and completed, max_concurrency 4, a request_goodput", got, err)
	}
	if got.P25TTFT == nil || got.P75E2EL == nil || *got.P25TTFT <= 0 || *got.P75E2EL < *got.P25TTFT {
		t.Errorf("--metric-percentiles 25,75: p25_ttft_ms %v, p75_e2el_ms %v; want both, positive", got.P25TTFT, got.P75E2EL)
	}
}

// TestRunVLLMNamesBadInput checks the vLLM names' refusals: each is a
// usage error (exit 2) naming the flags and the fix, before any request.
func TestRunVLLMNamesBadInput(t *testing.T) {
	t.Parallel()
	const url = "http://127.0.0.1:1" // never contacted: the flags are refused first
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"both spellings", []string{"--base-url", url, "--target", url}, "--base-url is vLLM's name for --target: give one of them"},
		{"both rates", []string{"--base-url", url, "--request-rate", "2", "--rate", "3"}, "--request-rate is vLLM's name for --rate"},
		{"range ratio", []string{"--base-url", url, "--random-range-ratio", "0.5"}, "--random-range-ratio 0.5: vllmperf sends every synthetic request at the same length"},
		{"result dir alone", []string{"--base-url", url, "--result-dir", "x"}, "add --save-result"},
		{"save and json", []string{"--base-url", url, "--save-result", "--json", "x.json"}, "--save-result and --json both write the result JSON"},
		{"unknown data set", []string{"--base-url", url, "--dataset-name", "burstgpt"}, `--dataset-name "burstgpt": vllmperf sends custom, random, random-mm, sharegpt`},
		{"custom without file", []string{"--base-url", url, "--dataset-name", "custom"}, "add --dataset FILE"},
		{"random with a file", []string{"--base-url", url, "--dataset-name", "random", "--dataset", "prompts.jsonl"}, "drop one of them"},
		{"prompts and requests", []string{"--base-url", url, "--num-prompts", "3", "--requests", "4", "--concurrency", "1"}, "--num-prompts is vLLM's name for --requests"},
		{"random length with a data set", []string{"--base-url", url, "--dataset", "sharegpt.json", "--random-input-len", "30", "--concurrency", "1"}, "--random-input-len makes synthetic prompts"},
		{"save without a model", []string{"--base-url", url, "--save-result", "--num-prompts", "3", "--max-concurrency", "1"}, "--save-result names its file after the model"},
		{"no bound", []string{"--base-url", url, "--max-concurrency", "2"}, "--requests N (vLLM's --num-prompts)"},
		{"a percentile out of range", []string{"--base-url", url, "--metric-percentiles", "50,100"}, `--metric-percentiles "50,100": "100" is no percentile`},
		{"a metric vLLM does not know", []string{"--base-url", url, "--percentile-metrics", "ttft,foo"}, `"foo" is none of vLLM's metrics`},
		{"goodput's keys", []string{"--base-url", url, "--num-prompts", "3", "--max-concurrency", "1", "--goodput", "ttft:200", "itl:5"}, "--goodput"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut, msg bytes.Buffer
			err := run(t.Context(), &out, &errOut, append([]string{"run", "--quiet"}, tc.args...))
			if code := exitstatus.Code(err, &msg); code != exitstatus.BadUsage || !bytes.Contains(msg.Bytes(), []byte(tc.want)) {
				t.Errorf("vllmperf run %v: exit %d, %q; want exit 2 and %q", tc.args, code, msg.String(), tc.want)
			}
		})
	}
}
