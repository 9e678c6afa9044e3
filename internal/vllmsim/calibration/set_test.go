package calibration

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestEmbeddedSet loads the shipped calibration set and checks what the
// calibration needs from it: enough rows, presets and loads, a held-out
// check set of about a third with every well-covered GPU preset checked, and
// a source address and locator on every row.
func TestEmbeddedSet(t *testing.T) {
	rows, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 24 {
		t.Errorf("%d rows, want at least 24", len(rows))
	}
	var runnable []Row
	gpus, models := map[string]int{}, map[string]bool{}
	checkedGPU := map[string]bool{}
	var c1, burst, moderate bool
	for _, r := range rows {
		if r.Source.URL == "" || r.Locator == "" {
			t.Errorf("%s: no source address or locator", r.ID)
		}
		if !r.Runnable() {
			continue
		}
		runnable = append(runnable, r)
		gpus[r.Hardware.GPU]++
		models[r.Model.Preset] = true
		if r.Split == Check {
			checkedGPU[r.Hardware.GPU] = true
		}
		w := r.Workload
		c1 = c1 || w.Concurrency == 1
		moderate = moderate || (w.Concurrency >= 4 && w.Concurrency <= 32)
		burst = burst || (math.IsInf(w.RequestRate, 1) && w.Concurrency == 0 && w.NumPrompts >= 100)
	}
	if len(gpus) < 3 {
		t.Errorf("runnable rows cover GPU presets %v, want at least 3", gpus)
	}
	if len(models) < 2 {
		t.Errorf("runnable rows cover model presets %v, want at least 2", models)
	}
	if !c1 || !moderate || !burst {
		t.Errorf("loads covered: concurrency 1 %v, moderate concurrency %v, rate-inf burst of 100+ prompts %v; want all", c1, moderate, burst)
	}
	for gpu, n := range gpus {
		if n >= 2 && !checkedGPU[gpu] {
			t.Errorf("GPU preset %s has %d runnable rows and none in the check set", gpu, n)
		}
	}
	check := len(CheckRows(runnable))
	if share := float64(check) / float64(len(runnable)); share < 0.25 || share > 0.45 {
		t.Errorf("check set holds %d of %d runnable rows (%.0f%%), want about a third", check, len(runnable), 100*share)
	}
	if got, want := len(FitRows(rows))+len(CheckRows(rows)), len(rows); got != want {
		t.Errorf("fit + check = %d rows, want %d", got, want)
	}
}

// TestSplitRule checks the rule on made-up rows: the hash decides alone in
// groups of one, every group of two or more has a check row, and adding rows
// never moves a row of a group that already had two from fit to check.
func TestSplitRule(t *testing.T) {
	mk := func(id, gpu string) Row {
		return Row{ID: id, Hardware: Hardware{GPU: gpu}, Model: Model{Preset: "Qwen/Qwen3-8B"}}
	}
	var rows []Row
	for i := 0; i < 30; i++ {
		rows = append(rows, mk("r"+strings.Repeat("x", i), []string{"h100", "a100", "l4"}[i%3]))
	}
	rows = append(rows, mk("lonely", "h200"))
	got := ExpectedSplit(rows)
	if want := map[bool]Split{true: Check, false: Fit}[idHash("lonely")%3 == 0]; got["lonely"] != want {
		t.Errorf("single row of its group: split %s, want %s from the hash alone", got["lonely"], want)
	}
	for _, gpu := range []string{"h100", "a100", "l4"} {
		n := 0
		for _, r := range rows {
			if r.Hardware.GPU == gpu && got[r.ID] == Check {
				n++
			}
		}
		if n == 0 {
			t.Errorf("group %s has no check row", gpu)
		}
	}
	more := append(slices.Clone(rows), mk("added-1", "h100"), mk("added-2", "a100"), mk("added-3", "l4"))
	after := ExpectedSplit(more)
	for _, r := range rows {
		if r.Hardware.GPU != "h200" && got[r.ID] == Fit && after[r.ID] == Check {
			t.Errorf("%s moved from fit to check when rows were added to its group", r.ID)
		}
	}
}

// TestSimInputs maps rows of each kind to the simulator's inputs.
func TestSimInputs(t *testing.T) {
	rows, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	fixture, err := loadFixture(t, "valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Row{fixture[0].ID: fixture[0]}
	for _, r := range rows {
		byID[r.ID] = r
	}
	inf := math.Inf(1)
	tests := []struct {
		id             string
		args           string
		unmodelled     []string
		in, out        int
		from           LengthSource
		conc, prompts  int
		rate           float64
		endpoint       Endpoint
		ignoreEOS      bool
		wantUnrunnable bool
	}{
		// Fixed lengths; --enforce-eager has no timing effect in vllm-sim, so it is reported, not passed;
		// the stated release is passed as --sim-vllm-version (release-dependent costs).
		{"test-h100-llama-8b-c1", "--model meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 64 --sim-gpu h100 --sim-vllm-version 0.11.0", []string{"enforce-eager"},
			1024, 128, LengthsFixed, 1, 10, inf, EndpointCompletions, true, false},
		// ShareGPT with published totals: 23260 / 100 and 22061 / 100, rounded.
		{"gpustack-h100-qwen3-8b-sharegpt-c1", "--model Qwen/Qwen3-8B --sim-gpu h100 --sim-vllm-version 0.11.0", nil,
			233, 221, LengthsMeanOfTotals, 1, 100, inf, EndpointChat, false, false},
		// Offline latency benchmark with tensor parallelism passed on.
		{"vllm-perf-9515-h200x4-llama-3-70b-latency-32-128-b8", "--model meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 --sim-gpu h200", nil,
			32, 128, LengthsFixed, 8, 8, inf, EndpointOffline, false, false},
		// --tokenizer-mode is passed (it slows detokenization); without
		// --ignore-eos the requests stopped early: 644 tok/s ÷ 6.44 req/s = 100 tokens.
		{"mushfiqrahman-rtx4090-mistral-7b-256-128-c16", "--model meta-llama/Llama-3.1-8B-Instruct --tokenizer-mode mistral --sim-gpu rtx4090", nil,
			256, 100, LengthsOutputFromThroughput, 16, 300, inf, EndpointUnstated, false, false},
		// Without --ignore-eos but every request ran its 128 tokens: (1024 + 128) / 128 = total / output tok/s.
		{"gpustack-rtx4090-qwen3-8b-random-1k-in", "--model Qwen/Qwen3-8B --sim-gpu rtx4090 --sim-vllm-version 0.10.1.1", nil,
			1024, 128, LengthsFixed, 0, 100, inf, EndpointChat, false, false},
		// No published lengths: presets and args are mapped, the workload is refused.
		{"sglang-h100x4-llama-3.1-70b-sharegpt-rps4", "--model meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 --max-model-len 4096 --sim-gpu h100 --sim-vllm-version 0.6.0",
			[]string{"disable-log-requests", "num-scheduler-steps"}, 0, 0, "", 0, 0, 0, "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			r, ok := byID[tt.id]
			if !ok {
				t.Fatalf("no row %s", tt.id)
			}
			in, err := r.SimInputs()
			if got := strings.Join(in.Args, " "); got != tt.args {
				t.Errorf("Args\n got %s\nwant %s", got, tt.args)
			}
			var unmodelled []string
			for _, f := range in.Unmodelled {
				unmodelled = append(unmodelled, f.Name)
			}
			if !slices.Equal(unmodelled, tt.unmodelled) {
				t.Errorf("Unmodelled = %v, want %v", unmodelled, tt.unmodelled)
			}
			if tt.wantUnrunnable {
				if !errors.Is(err, ErrLengthsUnpublished) || !strings.Contains(err.Error(), tt.id) {
					t.Fatalf("err = %v, want ErrLengthsUnpublished naming the row", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			w := in.Workload
			got := []any{w.InputTokens, w.OutputTokens, w.LengthsFrom, w.Concurrency, w.NumPrompts, w.RequestRate, w.Endpoint, w.IgnoreEOS}
			want := []any{tt.in, tt.out, tt.from, tt.conc, tt.prompts, tt.rate, tt.endpoint, tt.ignoreEOS}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("workload field %d = %v, want %v", i, got[i], want[i])
				}
			}
		})
	}
}

// TestReadmeCounts keeps the README's contents summary in step with the
// data: the sentence with the row counts and the totals row of its table.
func TestReadmeCounts(t *testing.T) {
	rows, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string]bool{}
	var runnable, n [4]int // runnable fit, runnable check, reference fit, reference check
	for _, r := range rows {
		sources[r.Source.ID] = true
		i := 0
		if !r.Runnable() {
			i = 2
		}
		if r.Split == Check {
			i++
		}
		n[i]++
		if r.Runnable() {
			runnable[0]++
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		fmt.Sprintf("%d rows from %d sources: %d runnable", len(rows), len(sources), runnable[0]),
		fmt.Sprintf("and %d reference rows", len(rows)-runnable[0]),
		fmt.Sprintf("| **total** | | **%d** | **%d** | **%d** | **%d** |", n[0], n[1], n[2], n[3]),
	} {
		if !strings.Contains(strings.Join(strings.Fields(string(readme)), " "), want) {
			t.Errorf("README.md does not say %q: update its Contents section", want)
		}
	}
}
