package calreplay

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/vllmsim/calibration"
	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
)

// simulatorDoc is docs/simulator.md, whose table of issue 38's load
// TestChatCapsSmallModel keeps.
const simulatorDoc = "../../docs/simulator.md"

// TestChatCapsSmallModel: issue 38's load (h100 Qwen3-0.6B, 640 requests
// at concurrency 64, 256 in, 128 out) in simulated time. On the chat
// endpoint one API server loop caps it (ChatRequest011 per request),
// whatever --max-num-seqs; on completions, or with two API servers, 64
// sequences a step serve well over 8,000 tok/s and more than 16 do. The
// figures are docs/simulator.md's table ("Real time: keeping the model's
// pace"): the test fails when they drift from it.
func TestChatCapsSmallModel(t *testing.T) {
	doc, err := os.ReadFile(simulatorDoc)
	if err != nil {
		t.Fatal(err)
	}
	run := func(ep calibration.Endpoint, apiServers, maxNumSeqs int) float64 {
		t.Helper()
		o, err := config.ParseArgs([]string{"--model", "Qwen/Qwen3-0.6B", "--sim-gpu", "h100", "--max-num-seqs", fmt.Sprint(maxNumSeqs),
			"--api-server-count", fmt.Sprint(apiServers), "--sim-cold-start", "0", "--sim-jitter", "0"})
		if err != nil {
			t.Fatal(err)
		}
		w := calibration.SimWorkload{InputTokens: 256, OutputTokens: 128, LengthsFrom: calibration.LengthsFixed, IgnoreEOS: true,
			Concurrency: 64, RequestRate: math.Inf(1), NumPrompts: 640, Endpoint: ep}
		res := Result{Inputs: calibration.SimInputs{GPU: "h100", Model: "Qwen/Qwen3-0.6B", Workload: w}, NumPrompts: w.NumPrompts}
		if err := simulate(o.Config, &res, 1); err != nil {
			t.Fatal(err)
		}
		return res.OutputThroughput
	}
	tests := []struct {
		ep         calibration.Endpoint
		apiServers int
		minRatio   float64 // 64 over 16 sequences a step
		maxRatio   float64
	}{
		{calibration.EndpointChat, 1, 0.95, 1.05},
		{calibration.EndpointChat, 2, 1.3, math.Inf(1)},
		{calibration.EndpointCompletions, 1, 1.5, math.Inf(1)},
	}
	for _, tt := range tests {
		at64, at16 := run(tt.ep, tt.apiServers, 64), run(tt.ep, tt.apiServers, 16)
		ratio := at64 / at16
		row := fmt.Sprintf("| %s | %s | %s tok/s | %s tok/s | %.2f× |", tt.ep, apiServerCell(tt.apiServers), thousands(at64), thousands(at16), ratio)
		t.Log(row)
		if ratio < tt.minRatio || ratio > tt.maxRatio {
			t.Errorf("%s, %d API servers: max-num-seqs 64 over 16 %.2f×, want %.2f–%.2f×", tt.ep, tt.apiServers, ratio, tt.minRatio, tt.maxRatio)
		}
		if tt.ep == calibration.EndpointCompletions && at64 < 8000 {
			t.Errorf("completions, max-num-seqs 64: %.0f tok/s, want ≥ 8000", at64)
		}
		if !strings.Contains(string(doc), row) {
			t.Errorf("%s has no row %q: update its table to what the simulator computes", simulatorDoc, row)
		}
	}
}

func apiServerCell(n int) string {
	if n == 1 {
		return "1 (default)"
	}
	return fmt.Sprint(n)
}

// thousands formats v rounded to a whole number with comma separators.
func thousands(v float64) string {
	s := fmt.Sprint(int64(math.Round(v)))
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
