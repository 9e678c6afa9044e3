package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// TestErrorRateFlag: a bad --max-error-rate (or its deprecated name,
// --max-failure-rate) is a usage error naming the flag as written and what
// to write, before any server starts; the old name warns on stderr.
// TestRow04_MaxErrorRate shows both names setting the limit.
func TestErrorRateFlag(t *testing.T) {
	t.Parallel()
	base := []string{"run", "--concurrency", "1", "--requests", "1"}
	for _, tc := range []struct {
		name string
		args []string // after base
		want []string // on stderr
	}{
		// A fraction above 1.
		{"fraction", []string{"--max-error-rate", "1.5"}, []string{`--max-error-rate "1.5": want a fraction from 0 to 1 (0.05) or a percentage from 0% to 100% (5%)`}},
		// Not a number.
		{"word", []string{"--max-error-rate", "five"}, []string{`--max-error-rate "five": want a fraction from 0 to 1`}},
		// The old name: the error names it as written, after the notice.
		{"old name", []string{"--max-failure-rate", "150%"}, []string{`--max-failure-rate "150%": want a fraction from 0 to 1`,
			"Flag --max-failure-rate has been deprecated, use --max-error-rate"}},
		// Both names: one limit, said twice.
		{"both names", []string{"--max-failure-rate", "5%", "--max-error-rate", "5%"}, []string{"--max-failure-rate and --max-error-rate set the same limit: give only --max-error-rate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runCLI(t, context.Background(), append(base, tc.args...)...).wantCode(t, 2, tc.want...)
		})
	}
}

// TestRunRejectsBadInput checks that each mistake gets a usage error (exit 2)
// that names the problem, before anything is started.
func TestRunRejectsBadInput(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string // part of the message
	}{
		// no load shape at all
		{"no loop", []string{"run", "--requests", "10"}, "--concurrency N (closed loop) or --rate R"},
		// both loop kinds at once
		{"both loops", []string{"run", "--concurrency", "2", "--rate", "3", "--requests", "5"}, "exclude each other"},
		// unbounded run
		{"unbounded", []string{"run", "--concurrency", "2"}, "--requests N (vLLM's --num-prompts) and/or --duration D"},
		// rate that is not a number
		{"bad rate", []string{"run", "--rate", "fast", "--requests", "5"}, `--rate "fast"`},
		// negative rate
		{"negative rate", []string{"run", "--rate", "-1", "--requests", "5"}, "positive number"},
		// max-concurrency only makes sense for an open loop
		{"cap on closed loop", []string{"run", "--concurrency", "2", "--max-concurrency", "4", "--requests", "5"}, "caps an open loop"},
		// goodput with an unknown metric
		{"bad goodput", []string{"run", "--concurrency", "1", "--requests", "1", "--goodput", "ttfb:100"}, "unknown metric"},
		// goodput without milliseconds
		{"goodput no value", []string{"run", "--concurrency", "1", "--requests", "1", "--goodput", "ttft"}, "NAME:MILLISECONDS"},
		// endpoint that does not exist
		{"bad endpoint", []string{"run", "--concurrency", "1", "--requests", "1", "--endpoint", "score"}, `--endpoint "score"`},
		// unknown flag
		{"unknown flag", []string{"run", "--concurency", "1"}, "unknown flag: --concurency"},
		// profile that does not exist
		{"bad profile", []string{"run", "--concurrency", "1", "--requests", "1", "--profile", "turbo"}, "--profile"},
		// api key variable that is empty
		{"empty key env", []string{"run", "--concurrency", "1", "--requests", "1", "--api-key-env", "VLLMPERF_TEST_SURELY_UNSET"}, "VLLMPERF_TEST_SURELY_UNSET"},
		// target plus a backend that would start something
		{"target and backend", []string{"run", "--concurrency", "1", "--requests", "1", "--target", "http://127.0.0.1:1", "--backend", "sim"}, "drop one of them"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut limitedBuffer
			err := run(context.Background(), &out, &errOut, tc.args)
			if err == nil {
				t.Fatalf("vllmperf %v succeeded, want an error containing %q", tc.args, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %q, want it to contain %q", err, tc.want)
			}
			if got := exitCode(err, &errOut); got != 2 {
				t.Errorf("exit code = %d, want 2 (usage error) for %v", got, err)
			}
		})
	}
}

// TestRunOnSimulator runs the default path a newcomer takes (make bench):
// the embedded simulator with the basic profile, and checks the summary.
func TestRunOnSimulator(t *testing.T) {
	got, samples := runJSON(t, "--concurrency", "4", "--requests", "12", "--prompt-tokens", "64", "--max-tokens", "16")
	if got["completed"].(float64) != 12 || got["failed"].(float64) != 0 {
		t.Fatalf("completed %v failed %v, want 12 and 0", got["completed"], got["failed"])
	}
	if got["total_output_tokens"].(float64) != 12*16 {
		t.Errorf("total_output_tokens = %v, want %d (ignore_eos, 16 each)", got["total_output_tokens"], 12*16)
	}
	if len(samples) != 13 || !samples[0].Warmup {
		t.Errorf("samples: %d (first warm-up %v), want 13 with the warm-up first", len(samples), len(samples) > 0 && samples[0].Warmup)
	}
	for _, key := range []string{"median_ttft_ms", "p99_tpot_ms", "mean_itl_ms", "p90_e2el_ms", "output_throughput", "request_throughput"} {
		if v, ok := got[key].(float64); !ok || v <= 0 {
			t.Errorf("%s = %v, want a positive number", key, got[key])
		}
	}
}

// TestRunInconclusive: a server that fails every request must not pass.
// With failures allowed (--max-error-rate 100%) nothing was measured:
// INCONCLUSIVE, exit 3; by default the error rate fails the run first
// (TestRow04_MaxErrorRate).
func TestRunInconclusive(t *testing.T) {
	testphase.Fault(t)
	base := startSim(t, "--sim-fault-500-rate", "1")
	var out, errOut limitedBuffer
	err := run(context.Background(), &out, &errOut, []string{"run", "--quiet", "--target", base, "--model", "Qwen/Qwen3-0.6B",
		"--concurrency", "2", "--requests", "4", "--warmup", "0", "--max-error-rate", "100%"})
	if got := exitCode(err, &errOut); got != 3 {
		t.Fatalf("exit code = %d (err %v), want 3 (inconclusive)\n%s", got, err, out.String())
	}
	if !strings.Contains(errOut.String(), "INCONCLUSIVE") || strings.Contains(out.String(), "INCONCLUSIVE") {
		t.Errorf("the verdict INCONCLUSIVE belongs to stderr's verdict, with exit 3, not to the summary:\nstdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "Figures:") {
		t.Errorf("summary does not say it has no figures:\n%s", out.String())
	}
}

// TestRunProfileInSimContainer is the one-command container path:
// `vllmperf run --image sim --profile low-latency` builds the simulator image,
// starts it through testcontainers with the profile's flags, measures, and
// removes the container.
func TestRunProfileInSimContainer(t *testing.T) {
	if err := server.DockerAvailable(context.Background()); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Docker is required in CI: %v", err)
		}
		t.Skipf("no Docker engine (%v): skipping the container path; install docker.io and start dockerd to run it", err)
	}
	got, _ := runJSON(t, "--image", "sim", "--profile", "low-latency", "--concurrency", "2", "--requests", "4", "--max-tokens", "8")
	if got["completed"].(float64) != 4 {
		t.Fatalf("completed = %v, want 4", got["completed"])
	}
}

// TestRunWithAPIKey: against a simulator started with --api-key, the key
// from --api-key-env reaches every request (and the model list), and no
// output shows it.
func TestRunWithAPIKey(t *testing.T) {
	const key = "vllmperf-test-key-8f3a"
	base := startSim(t, "--api-key", key)
	t.Setenv("VLLMPERF_TEST_KEY", key)
	var out, errOut limitedBuffer
	err := run(context.Background(), &out, &errOut, []string{"run", "--target", base, "--api-key-env", "VLLMPERF_TEST_KEY",
		"--concurrency", "2", "--requests", "4", "--max-tokens", "4", "--warmup", "0"})
	if err != nil {
		t.Fatalf("run with the key: %v\n%s", err, errOut.String())
	}
	if strings.Contains(out.String()+errOut.String(), key) {
		t.Errorf("the API key appears in the output")
	}
	if !strings.Contains(out.String(), "Successful requests:                     4") {
		t.Errorf("want 4 successful requests:\n%s", out.String())
	}
	// Without the key the server's 401 is named, with the fix.
	t.Setenv("OPENAI_API_KEY", "")
	err = run(context.Background(), &out, &errOut, []string{"run", "--quiet", "--target", base, "--concurrency", "1", "--requests", "1"})
	if err == nil || !strings.Contains(err.Error(), "--api-key-env") {
		t.Errorf("without the key: err = %v, want one naming --api-key-env", err)
	}
}

// TestRunProgressOnStderr: without a terminal, progress is plain lines on
// stderr, ending at the total; stdout carries only the summary.
func TestRunProgressOnStderr(t *testing.T) {
	var out, errOut limitedBuffer
	if err := run(context.Background(), &out, &errOut, []string{"run", "--concurrency", "2", "--requests", "10", "--max-tokens", "4", "--warmup", "0"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "vllmperf: 10/10 requests done") {
		t.Errorf("stderr lacks the final progress line:\n%s", errOut.String())
	}
	if strings.Contains(out.String(), "requests done") {
		t.Errorf("progress leaked into stdout:\n%s", out.String())
	}
}
