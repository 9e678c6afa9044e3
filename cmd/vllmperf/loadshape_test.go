package main

import (
	"context"
	"strings"
	"testing"
)

// TestRunRejectsBadRamp: vLLM's checks of --ramp-up-*, each a usage error
// naming the fix.
func TestRunRejectsBadRamp(t *testing.T) {
	t.Parallel()
	ramp := func(extra ...string) []string {
		return append([]string{"run", "--requests", "10"}, extra...)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		// vLLM: "When using ramp-up, do not specify --request-rate."
		{"with a rate", ramp("--rate", "3", "--ramp-up-strategy", "linear", "--ramp-up-start-rps", "1", "--ramp-up-end-rps", "2"), "drop --rate"},
		{"with a closed loop", ramp("--concurrency", "3", "--ramp-up-strategy", "linear", "--ramp-up-start-rps", "1", "--ramp-up-end-rps", "2"), "drop --concurrency"},
		{"no end", ramp("--ramp-up-strategy", "linear", "--ramp-up-start-rps", "1"), "needs both --ramp-up-start-rps and --ramp-up-end-rps"},
		{"ends without a strategy", ramp("--rate", "2", "--ramp-up-start-rps", "1"), "go with --ramp-up-strategy"},
		{"unknown strategy", ramp("--ramp-up-strategy", "step", "--ramp-up-start-rps", "1", "--ramp-up-end-rps", "2"), `strategy "step": want linear or exponential`},
		{"start above end", ramp("--ramp-up-strategy", "linear", "--ramp-up-start-rps", "5", "--ramp-up-end-rps", "2"), "swap them"},
		// vLLM: "For exponential ramp-up, the start RPS cannot be 0."
		{"zero start", ramp("--ramp-up-strategy", "exponential", "--ramp-up-start-rps", "0", "--ramp-up-end-rps", "2"), "start 0 req/s"},
		{"no request count", []string{"run", "--duration", "10s", "--ramp-up-strategy", "linear", "--ramp-up-start-rps", "1", "--ramp-up-end-rps", "2"}, "add --requests N"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut limitedBuffer
			err := run(context.Background(), &out, &errOut, tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("vllmperf %v: %v, want an error containing %q", tc.args, err, tc.want)
			}
			if got := exitCode(err, &errOut); got != 2 {
				t.Errorf("exit code = %d, want 2 (usage error) for %v", got, err)
			}
		})
	}
}

// TestRunRampOnSimulator: a ramp-up on the embedded simulator reports its
// rate windows and the steady-state window's absence, in the JSON too.
func TestRunRampOnSimulator(t *testing.T) {
	// vLLM's spelling: its default --request-rate inf beside the ramp,
	// --num-prompts, a cap on the requests in flight.
	got, _ := runJSON(t, "--ramp-up-strategy", "linear", "--ramp-up-start-rps", "5", "--ramp-up-end-rps", "40", "--num-prompts", "60",
		"--request-rate", "inf", "--max-concurrency", "32", "--prompt-tokens", "64", "--max-tokens", "8")
	if got["ramp_up_strategy"] != "linear" || got["ramp_up_start_rps"] != 5.0 || got["ramp_up_end_rps"] != 40.0 {
		t.Errorf("ramp keys: %v %v %v", got["ramp_up_strategy"], got["ramp_up_start_rps"], got["ramp_up_end_rps"])
	}
	wins, _ := got["ramp_windows"].([]any)
	if len(wins) != 6 {
		t.Fatalf("ramp_windows has %d windows, want 6 of 10 requests", len(wins))
	}
	first, last := wins[0].(map[string]any), wins[len(wins)-1].(map[string]any)
	if lo, hi := first["offered_rps"].(float64), last["offered_rps"].(float64); !(lo < 10 && hi > 30) {
		t.Errorf("offered from %v to %v req/s, want the ramp's climb from 5 to 40", lo, hi)
	}
	if sw, _ := got["steady_window"].(map[string]any); sw == nil || !strings.Contains(sw["none"].(string), "ramp-up") {
		t.Errorf("steady_window = %v, want none, naming the ramp", got["steady_window"])
	}
	if got["metrics_window"] != "whole run" {
		t.Errorf("metrics_window = %v, want whole run", got["metrics_window"])
	}
}

// TestRunSteadyWindow: a closed loop names its steady window in the JSON.
func TestRunSteadyWindow(t *testing.T) {
	got, _ := runJSON(t, "--concurrency", "4", "--requests", "24", "--prompt-tokens", "64", "--max-tokens", "8")
	sw, _ := got["steady_window"].(map[string]any)
	if sw == nil || sw["from_s"] == nil || sw["requests"].(float64) < 1 || !strings.Contains(sw["rule"].(string), "4-th request sent") {
		t.Fatalf("steady_window = %v, want bounds, figures and its rule", got["steady_window"])
	}
}
