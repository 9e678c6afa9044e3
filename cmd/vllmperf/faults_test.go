package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/vllmperf/vllmperf/internal/run/vllmfmt"
	"github.com/vllmperf/vllmperf/internal/testphase"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// The tests of issue 11's rows at the command line (docs/reliability.md).
// Each runs `vllmperf run` in this process against the simulator with a
// fault switched on, or against fakeVLLM where the simulator has no such
// fault.

// cliResult is what one `vllmperf` invocation produced.
type cliResult struct {
	err            error
	code           int
	stdout, stderr string
}

// runCLI runs vllmperf with args and returns its exit status and output.
func runCLI(t *testing.T, ctx context.Context, args ...string) cliResult {
	t.Helper()
	var out, errOut limitedBuffer
	err := run(ctx, &out, &errOut, args)
	code := exitCode(err, &errOut)
	return cliResult{err: err, code: code, stdout: out.String(), stderr: errOut.String()}
}

// wantCode fails the test unless the run exited with want and its stderr
// holds every one of msgs.
func (r cliResult) wantCode(t *testing.T, want int, msgs ...string) {
	t.Helper()
	if r.code != want {
		t.Fatalf("exit %d, want %d\nerr: %v\nstderr:\n%s\nstdout:\n%s", r.code, want, r.err, r.stderr, r.stdout)
	}
	for _, m := range msgs {
		if !strings.Contains(r.stderr, m) {
			t.Errorf("stderr lacks %q:\n%s", m, r.stderr)
		}
	}
}

// readJSON decodes a --json file.
func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, data)
	}
	return got
}

// countSamples reads a --samples file and returns how many records it has.
func countSamples(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := vllmfmt.ReadSamples(f)
	if err != nil {
		t.Fatal(err)
	}
	return len(s)
}

// simTarget is the flags that aim a run at a simulator started with
// simArgs.
func simTarget(t *testing.T, simArgs ...string) []string {
	return []string{"--target", startSim(t, simArgs...), "--quiet"}
}

// TestRow01_OutputsCheckedBeforeLoad: an output path that cannot be
// written fails the run before any request is sent, naming the flag, and
// leaves nothing behind; an output that fails while being written does not
// keep the other from being written.
func TestRow01_OutputsCheckedBeforeLoad(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	for _, tc := range []struct {
		name      string
		json      string
		samples   string
		want      string
		wantFiles []string // must not exist afterwards
	}{
		// The row: a directory that does not exist.
		{"missing dir", "/nonexistent/dir/r.json", filepath.Join(dir, "s1.jsonl"),
			"--json /nonexistent/dir/r.json: the directory /nonexistent/dir does not exist", []string{filepath.Join(dir, "s1.jsonl")}},
		// The second output is bad: the first is not created either.
		{"samples bad", filepath.Join(dir, "r2.json"), filepath.Join(dir, "nope", "s.jsonl"),
			"--samples " + filepath.Join(dir, "nope", "s.jsonl") + ": the directory", []string{filepath.Join(dir, "r2.json")}},
		// A directory where a file should be.
		{"is a dir", dir, "", "--json " + dir + ": that is a directory; give a file name", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeVLLM{tokens: 4}
			args := []string{"run", "--quiet", "--target", f.start(t), "--concurrency", "1", "--requests", "2", "--json", tc.json}
			if tc.samples != "" {
				args = append(args, "--samples", tc.samples)
			}
			runCLI(t, ctx, args...).wantCode(t, 2, tc.want)
			if n := f.arrived.Load(); n != 0 {
				t.Errorf("%d requests were sent before the output was checked", n)
			}
			for _, p := range tc.wantFiles {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s exists after the refused run", p)
				}
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
	// Each output on its own: --json on a full device fails while the
	// samples are written all the same.
	t.Run("json write fails", func(t *testing.T) {
		if _, err := os.Stat("/dev/full"); err != nil {
			t.Skip("no /dev/full on this system")
		}
		f := &fakeVLLM{tokens: 4}
		samples := filepath.Join(t.TempDir(), "s.jsonl")
		r := runCLI(t, ctx, "run", "--quiet", "--target", f.start(t), "--concurrency", "1", "--requests", "3", "--warmup", "0",
			"--json", "/dev/full", "--samples", samples)
		r.wantCode(t, 1, "--json /dev/full: ", "no space left on device")
		if got, want := countSamples(t, samples), 3; got != want {
			t.Errorf("samples file has %d records, want %d", got, want)
		}
		if !strings.Contains(r.stdout, "Successful requests:                     3") {
			t.Errorf("the summary is missing from stdout:\n%s", r.stdout)
		}
	})
}

// TestRow02_SameOutputTwice: --json and --samples naming one file is a
// usage error, however the path is spelt.
func TestRow02_SameOutputTwice(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ name, json, samples string }{
		{"same", filepath.Join(dir, "x"), filepath.Join(dir, "x")},                          // the row
		{"spelt apart", filepath.Join(dir, "x"), filepath.Join(dir, ".", "sub", "..", "x")}, // one file, two spellings
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runCLI(t, context.Background(), "run", "--concurrency", "1", "--requests", "1", "--json", tc.json, "--samples", tc.samples).
				wantCode(t, 2, "--json and --samples both name", "give each its own file")
		})
	}
}

// failingWriter fails every write, as a full or closed stdout does.
type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// TestRow03_StdoutFails: the files are written before the summary goes to
// stdout, so a stdout that fails loses nothing; the run then fails (exit
// 1) saying so. The process-level test is TestRow03_StdoutClosedOrFullProcess.
func TestRow03_StdoutFails(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	dir := t.TempDir()
	jsonPath, samples := filepath.Join(dir, "r.json"), filepath.Join(dir, "s.jsonl")
	var errOut limitedBuffer
	args := append([]string{"run"}, append(simTarget(t), "--concurrency", "2", "--requests", "4", "--warmup", "0", "--max-tokens", "4", "--json", jsonPath, "--samples", samples)...)
	err := run(context.Background(), failingWriter{syscall.EPIPE}, &errOut, args)
	if code := exitCode(err, &errOut); code != 1 {
		t.Fatalf("exit %d, want 1: %v", code, err)
	}
	if !strings.Contains(errOut.String(), "write the summary to stdout: broken pipe (the files are written all the same)") {
		t.Errorf("stderr does not say stdout failed:\n%s", errOut.String())
	}
	if got := readJSON(t, jsonPath)["completed"]; got != 4.0 {
		t.Errorf("completed = %v, want 4", got)
	}
	if got := countSamples(t, samples); got != 4 {
		t.Errorf("samples: %d, want 4", got)
	}
}

// TestRow04_MaxErrorRate: half the requests fail (--sim-fault-500-rate
// 0.5): the run fails (exit 1) naming the rate, the limit and the top
// error with its message; allowing the rate passes it. A server whose
// engine dies after five requests is named as down with its last logs.
func TestRow04_MaxErrorRate(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	ctx := context.Background()
	t.Run("500 rate", func(t *testing.T) {
		t.Parallel()
		target := simTarget(t, "--sim-fault-500-rate", "0.5", "--sim-seed", "7")
		base := append(append([]string{"run"}, target...), "--concurrency", "4", "--requests", "40", "--max-tokens", "4", "--warmup", "0", "--max-consecutive-failures", "0")
		runCLI(t, ctx, base...).wantCode(t, 1, "is above --max-error-rate 0%; most failed with http_status (",
			"e.g. HTTP 500: InternalServerError: Internal Server Error (injected by --sim-fault-500-rate)")
		runCLI(t, ctx, append(base, "--max-error-rate", "90%")...).wantCode(t, 0)
		// The old name still sets the limit, with a notice naming the new one.
		runCLI(t, ctx, append(base, "--max-failure-rate", "90%")...).wantCode(t, 0,
			"Flag --max-failure-rate has been deprecated, use --max-error-rate")
	})
	t.Run("engine dies", func(t *testing.T) {
		t.Parallel()
		jsonPath := filepath.Join(t.TempDir(), "r.json")
		r := runCLI(t, ctx, "run", "--quiet", "--profile", "testdata/profile-dies.yaml", "--concurrency", "2", "--requests", "30",
			"--max-tokens", "4", "--warmup", "0", "--json", jsonPath)
		r.wantCode(t, 1, "server no longer healthy: /health answered 503", "EngineCore died after 5 requests",
			"is above --max-error-rate 0%", "EngineDeadError")
		if got := readJSON(t, jsonPath)["completed"]; got != 5.0 {
			t.Errorf("completed = %v, want 5", got)
		}
	})
}

// TestRow06_ContextLength: a prompt that cannot fit the server's context
// (max_model_len 4096 on /v1/models, the basic profile's) is refused
// before any request; where the server reports no length, its own refusal
// is shown, one example per error kind.
func TestRow06_ContextLength(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	ctx := context.Background()
	t.Run("pre-check", func(t *testing.T) {
		t.Parallel()
		runCLI(t, ctx, "run", "--quiet", "--concurrency", "1", "--requests", "2", "--prompt-tokens", "5000").
			wantCode(t, 2, "--prompt-tokens 5000 + --shared-prefix-tokens 0 + --max-tokens 128 = 5128 tokens, more than the 4096 the server accepts for Qwen/Qwen3-0.6B (max_model_len on /v1/models)")
	})
	t.Run("fake reports one", func(t *testing.T) {
		t.Parallel()
		f := &fakeVLLM{tokens: 4, maxModelLen: 2048}
		runCLI(t, ctx, "run", "--quiet", "--target", f.start(t), "--concurrency", "1", "--requests", "2", "--prompt-tokens", "2000", "--max-tokens", "100").
			wantCode(t, 2, "= 2100 tokens, more than the 2048 the server accepts for fake/model")
		if n := f.arrived.Load(); n != 0 {
			t.Errorf("%d requests sent after the pre-check failed", n)
		}
	})
	t.Run("no length reported", func(t *testing.T) {
		t.Parallel()
		f := &fakeVLLM{chatStatus: 400, chatBody: `{"error":{"message":"This model's maximum context length is 4096 tokens. However, you requested 5128 tokens (5000 in the messages, 128 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}}`}
		r := runCLI(t, ctx, "run", "--quiet", "--target", f.start(t), "--concurrency", "1", "--requests", "2", "--prompt-tokens", "5000", "--warmup", "0", "--max-consecutive-failures", "0")
		r.wantCode(t, 1, "e.g. HTTP 400: ", "maximum context length is 4096 tokens")
		if !strings.Contains(r.stdout, "e.g. HTTP 400: BadRequestError: This model's maximum context length is 4096 tokens") {
			t.Errorf("the summary lacks the error example:\n%s", r.stdout)
		}
	})
}

// TestRow07_ZeroAndNegativeValues: values that would be replaced by a
// default or turn a check off are refused with the valid range; the zeros
// that mean something are documented in --help.
func TestRow07_ZeroAndNegativeValues(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	base := []string{"run", "--concurrency", "1", "--requests", "1"}
	for _, tc := range []struct {
		args []string // after base (or instead of its load flags, see rate)
		want string
	}{
		{[]string{"--max-tokens", "0"}, "--max-tokens 0: want at least 1"},
		{[]string{"--prompt-tokens", "0"}, "--prompt-tokens 0: want at least 6"},
		{[]string{"--shared-prefix-tokens", "-1"}, "--shared-prefix-tokens -1: want 0 (no shared prompt) or at least 3"},
		{[]string{"--request-timeout", "-1s"}, "--request-timeout -1s: want a positive duration, or 0 for none"},
		{[]string{"--idle-timeout", "-1s"}, "--idle-timeout -1s: want a positive duration, or 0 for none"},
		{[]string{"--warmup", "-1"}, "--warmup -1: want 0 or more"},
		{[]string{"--sample-interval", "0s"}, "--sample-interval 0s: want a duration of at least 100ms"},
		{[]string{"--max-error-rate", "1.5"}, `--max-error-rate "1.5": want a fraction from 0 to 1`},
		{[]string{"--max-error-rate", "150%"}, `--max-error-rate "150%"`},
		{[]string{"--max-error-rate", "-0.1"}, `--max-error-rate "-0.1"`},
		{[]string{"--max-consecutive-failures", "-1"}, "--max-consecutive-failures -1: want a positive count, or 0 to never stop early (default 100)"},
		{[]string{"--max-event-size", "big"}, `--max-event-size "big": want a size such as 4MiB`},
		{[]string{"--burstiness", "1"}, "--burstiness shapes the arrivals of an open loop: use it with --rate"},
		{[]string{"--grace", "5s"}, "--grace applies after --duration's deadline"},
		{[]string{"--concurrency", "0"}, "--concurrency 0: want at least 1"},
		{[]string{"--requests", "0", "--duration", "1s"}, "--requests 0: want at least 1"},
		{[]string{"--duration", "0s"}, "--duration 0s: want a positive duration"},
		{[]string{"--wait-ready", "-1s", "--target", "http://127.0.0.1:1"}, "--wait-ready -1s: want a positive duration"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			runCLI(t, context.Background(), append(base, tc.args...)...).wantCode(t, 2, tc.want)
		})
	}
	// vLLM asserts burstiness > 0: an open loop with 0 or less is refused.
	for _, b := range []string{"0", "-1", "NaN"} {
		t.Run("burstiness "+b, func(t *testing.T) {
			t.Parallel()
			runCLI(t, context.Background(), "run", "--rate", "2", "--requests", "1", "--burstiness", b).
				wantCode(t, 2, "--burstiness "+b+": want a positive gamma shape")
		})
	}
	t.Run("grace 0", func(t *testing.T) {
		t.Parallel()
		runCLI(t, context.Background(), "run", "--concurrency", "1", "--duration", "1s", "--grace", "0s").wantCode(t, 2, "--grace 0s: want a positive duration (default 1m0s)")
	})
	t.Run("help", func(t *testing.T) {
		t.Parallel()
		r := runCLI(t, context.Background(), "run", "--help")
		for _, want := range []string{"deadline of one whole request (0: none)", "timed out (0: none)", "cap on requests in flight (0: no cap)",
			"(0: never stop early)", "(0: no cap, memory then grows", "(0: check once)"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("--help lacks %q", want)
			}
		}
	})
}

// TestRow08_UsageErrorsNameTheFlag: an extra argument and a target
// without its scheme are usage errors (exit 2) naming what was given.
func TestRow08_UsageErrorsNameTheFlag(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	for _, tc := range []struct {
		name    string
		args    []string
		want    string
		notWant string
	}{
		// A stray positional argument.
		{"extra argument", []string{"run", "--concurrency", "1", "--requests", "1", "extra"}, `unexpected argument "extra": vllmperf run takes flags only`, ""},
		// A URL given without --target.
		{"url argument", []string{"run", "--concurrency", "1", "--requests", "1", "http://127.0.0.1:8000"}, "a server's URL goes after --target", ""},
		// The row: no scheme; the message names --target, not the variable.
		{"no scheme", []string{"run", "--concurrency", "1", "--requests", "1", "--target", "127.0.0.1:18400"},
			`--target: "127.0.0.1:18400" has no scheme: want the server's base URL, e.g. http://127.0.0.1:18400`, "VLLMPERF_TARGET"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, context.Background(), tc.args...)
			r.wantCode(t, 2, tc.want)
			if tc.notWant != "" && strings.Contains(r.stderr, tc.notWant) {
				t.Errorf("stderr names %s, which was not given:\n%s", tc.notWant, r.stderr)
			}
		})
	}
}

// TestRow09_WrongKey: a key the server refuses is named by the variable it
// came from, both when the model list refuses it (before any load) and
// when only the requests do.
func TestRow09_WrongKey(t *testing.T) {
	testphase.Fault(t)
	ctx := context.Background()
	t.Run("model list", func(t *testing.T) {
		base := startSim(t, "--api-key", "right-key-1234")
		t.Setenv("WRONGKEY", "wrong-key-5678")
		r := runCLI(t, ctx, "run", "--quiet", "--target", base, "--api-key-env", "WRONGKEY", "--concurrency", "1", "--requests", "1")
		r.wantCode(t, 1, "the server rejected the key from $WRONGKEY: it must hold the key the server was started with (vLLM --api-key)")
		if strings.Contains(r.stderr+r.stdout, "wrong-key-5678") {
			t.Error("the key appears in the output")
		}
	})
	t.Run("requests", func(t *testing.T) {
		f := &fakeVLLM{chatStatus: 401, chatBody: `{"error":"Unauthorized"}`}
		t.Setenv("WRONGKEY", "wrong-key-5678")
		r := runCLI(t, ctx, "run", "--quiet", "--target", f.start(t), "--api-key-env", "WRONGKEY", "--concurrency", "1", "--requests", "2", "--warmup", "0")
		r.wantCode(t, 1, "the server rejected the key from $WRONGKEY", "most failed with auth (2)")
	})
}

// TestRow10_ConsecutiveFailuresStop: a server that fails every request
// stops a --duration run after --max-consecutive-failures identical
// failures, saying why, in the JSON too.
func TestRow10_ConsecutiveFailuresStop(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	jsonPath, samples := filepath.Join(t.TempDir(), "r.json"), filepath.Join(t.TempDir(), "s.jsonl")
	args := append(append([]string{"run"}, simTarget(t, "--sim-fault-500-rate", "1")...),
		"--concurrency", "1", "--duration", "2s", "--warmup", "0", "--max-consecutive-failures", "7", "--json", jsonPath, "--samples", samples)
	runCLI(t, context.Background(), args...).wantCode(t, 1,
		"stopped early after 7 consecutive identical failures (http_status (HTTP 500): ", "(--max-consecutive-failures 7; 0 never stops early)")
	if got := countSamples(t, samples); got != 7 {
		t.Errorf("%d requests sent, want 7: the run did not stop at the streak", got)
	}
	if got, _ := readJSON(t, jsonPath)["stopped_early"].(string); !strings.HasPrefix(got, "stopped early after 7 consecutive identical failures") {
		t.Errorf("stopped_early = %q", got)
	}
}

// TestRow11_TargetWithServerFlags: --profile and --image need a backend
// that starts a server; with --target (or --backend external) they are
// refused instead of ignored.
func TestRow11_TargetWithServerFlags(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--target", "http://127.0.0.1:1", "--profile", "high-throughput"}, "--profile needs a backend that starts a server, but --target names one that is already running"},
		{[]string{"--target", "http://127.0.0.1:1", "--image", "sim"}, "--image needs a backend that starts a server, but --target names"},
		{[]string{"--backend", "external", "--profile", "low-latency"}, "--profile needs a backend that starts a server, but --backend external names"},
		{[]string{"--backend", "sim", "--image", "sim"}, "--image runs a container, but --backend sim starts none"},
		{[]string{"--backend", "sim", "--wait-ready", "1m"}, "--wait-ready waits for a running server named by --target"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			runCLI(t, context.Background(), append([]string{"run", "--concurrency", "1", "--requests", "1"}, tc.args...)...).wantCode(t, 2, tc.want)
		})
	}
}

// TestRow11_ExternalFromEnvironment: with the external backend chosen by
// VLLMPERF_BACKEND, --profile is refused naming the variable.
func TestRow11_ExternalFromEnvironment(t *testing.T) {
	testphase.Fault(t)
	t.Setenv("VLLMPERF_BACKEND", "external")
	runCLI(t, context.Background(), "run", "--concurrency", "1", "--requests", "1", "--profile", "low-latency").
		wantCode(t, 2, "--profile needs a backend that starts a server, but VLLMPERF_BACKEND=external names one")
}

// TestRow12_ShortOutputsWarned: a server that ignores ignore_eos and
// returns 3 of 128 tokens is warned about, in the JSON too.
func TestRow12_ShortOutputsWarned(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	f := &fakeVLLM{tokens: 3}
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	r := runCLI(t, context.Background(), "run", "--quiet", "--target", f.start(t), "--concurrency", "1", "--requests", "2", "--warmup", "0",
		"--max-tokens", "128", "--json", jsonPath)
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "2 of 2 completed requests returned fewer than the 128 completion tokens asked for") {
		t.Errorf("no short-output warning:\n%s", r.stdout)
	}
	got := readJSON(t, jsonPath)
	if got["short_outputs"] != 2.0 || got["expected_output_tokens"] != 128.0 {
		t.Errorf("short_outputs %v expected_output_tokens %v, want 2 and 128", got["short_outputs"], got["expected_output_tokens"])
	}
}

// TestRow13_GraceCutColdRequest: the first request streams 101 chunks and
// is still running when the grace period ends; the warning says it was cut
// after its chunks, not that it produced no first token.
func TestRow13_GraceCutColdRequest(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	f := &fakeVLLM{tokens: 200, stallAfter: 101}
	r := runCLI(t, context.Background(), "run", "--quiet", "--target", f.start(t), "--concurrency", "1", "--duration", "1s", "--grace", "1s",
		"--max-tokens", "200", "--warmup", "0", "--max-error-rate", "100%")
	if strings.Contains(r.stdout, "produced no first token") {
		t.Errorf("the wrong warning is back:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "did not complete (grace_expired") || !strings.Contains(r.stdout, "after 101 content chunks") {
		t.Errorf("the warning does not say the first request was cut after its 101 chunks:\n%s", r.stdout)
	}
}

// TestRow14_InterruptedRun: SIGTERM (here the context's cause, as main
// sets it) during a run exits 143, counts the requests cut short apart
// from failures, and marks the JSON interrupted; the files are written.
// The process-level test with real signals is TestRow14_SignalsProcess.
func TestRow14_InterruptedRun(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	f := &fakeVLLM{tokens: 50, stallAfter: 2}
	base := f.start(t)
	jsonPath, samples := filepath.Join(t.TempDir(), "r.json"), filepath.Join(t.TempDir(), "s.jsonl")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go func() {
		for range 2 {
			<-f.inFlight
		}
		cancel(exitstatus.SignalError{Sig: syscall.SIGTERM})
	}()
	r := runCLI(t, ctx, "run", "--quiet", "--target", base, "--concurrency", "2", "--requests", "10", "--warmup", "0",
		"--json", jsonPath, "--samples", samples)
	r.wantCode(t, 143, "interrupted (SIGTERM) after 2 requests (2 cut short, counted apart from failures): partial results above and in "+jsonPath)
	got := readJSON(t, jsonPath)
	if got["interrupted"] != true || got["interrupted_requests"] != 2.0 || got["failed"] != 0.0 || got["num_prompts"] != 10.0 {
		t.Errorf("interrupted %v interrupted_requests %v failed %v num_prompts %v, want true, 2, 0, 10",
			got["interrupted"], got["interrupted_requests"], got["failed"], got["num_prompts"])
	}
	if n := countSamples(t, samples); n != 2 {
		t.Errorf("samples: %d, want 2", n)
	}
	if !strings.Contains(r.stdout, "Interrupted requests:                    2") {
		t.Errorf("summary lacks the interrupted line:\n%s", r.stdout)
	}
}

// TestRow15_WaitReady: a target that answers 503 while it starts
// (--sim-startup) fails at once with a pointer to --wait-ready, and is
// waited for with it.
func TestRow15_WaitReady(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	ctx := context.Background()
	load := []string{"--concurrency", "1", "--requests", "1", "--max-tokens", "4", "--quiet"}
	runCLI(t, ctx, append([]string{"run", "--target", startSim(t, "--sim-startup", "10m")}, load...)...).
		wantCode(t, 1, "is not healthy: GET ", "/health: 503 Service Unavailable", "if the server is still starting, wait for it with --wait-ready")
	runCLI(t, ctx, append([]string{"run", "--target", startSim(t, "--sim-startup", "1500ms"), "--wait-ready", "1m"}, load...)...).wantCode(t, 0)
}

// TestRow16_TargetWithAPIPath: a target given as the chat endpoint's URL
// runs against the server's base URL, and says so.
func TestRow16_TargetWithAPIPath(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	f := &fakeVLLM{tokens: 4}
	base := f.start(t)
	r := runCLI(t, context.Background(), "run", "--quiet", "--target", base+"/v1/chat/completions", "--concurrency", "1", "--requests", "2", "--max-tokens", "4")
	r.wantCode(t, 0, "using the server's base URL "+base)
	if n := f.arrived.Load(); n != 3 {
		t.Errorf("%d chat requests reached the server, want 3 (1 warm-up + 2)", n)
	}
}

// TestCorruptBaselineExit2: a baseline with a damaged line, or cut short
// mid-line as a killed run leaves it, is a usage error (exit 2) naming the
// file and the line; a broken thresholds.yaml with file:line:col is
// TestGateExitCodes's "broken thresholds" row and thresholds.TestParseErrors.
func TestCorruptBaselineExit2(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	good, err := os.ReadFile("../../internal/gate/testdata/bench/base.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(good), "\n")
	bench := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "BenchmarkPerf") })
	if bench < 0 {
		t.Fatal("no benchmark line in base.txt")
	}
	for _, tc := range []struct {
		name string
		text string
		want string
	}{
		// A value that is no number.
		{"bad value", strings.Join(slices.Concat(lines[:bench], []string{"BenchmarkPerf/profile=basic/scenario=x-2\t1\tfast ns/op"}, lines[bench:]), "\n"),
			fmt.Sprintf("bad value.txt:%d: parsing measurement", bench+1)},
		// The last line cut in the middle of its value and unit.
		{"cut short", strings.Join(lines[:bench+1], "\n") + "\nBenchmarkPerf/profile=basic/scenario=x-2\t1\t12",
			fmt.Sprintf("cut short.txt:%d: missing units", bench+2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), tc.name+".txt")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			runCLI(t, context.Background(), "gate", "--baseline", path, "--new", "../../internal/gate/testdata/bench/noise.txt", "--step-summary=").
				wantCode(t, 2, tc.want)
		})
	}
}
