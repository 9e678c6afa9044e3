package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/testphase"
)

// The probes of issue 50 the command itself answers: rows of
// docs/reliability.md.

// TestRow50_AbsurdValues: values past an upper bound are refused before
// anything is allocated, naming the flag and the bound (exit 2), instead
// of Go's fatal "out of memory".
func TestRow50_AbsurdValues(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--concurrency", "1000000000", "--requests", "2"}, "--concurrency 1000000000: at most 16384 requests in flight"},
		{[]string{"--rate", "5", "--max-concurrency", "99999999", "--requests", "2"}, "--max-concurrency 99999999: at most 16384"},
		{[]string{"--concurrency", "1", "--requests", "2", "--prompt-tokens", "1099511627776"}, "--prompt-tokens 1099511627776: at most 4194304 tokens"},
		{[]string{"--concurrency", "1", "--requests", "2", "--max-tokens", "1099511627776"}, "--max-tokens 1099511627776: at most 4194304 tokens"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			runCLI(t, context.Background(), append([]string{"run"}, tc.args...)...).wantCode(t, 2, tc.want)
		})
	}
}

// TestRow50_GateNonFinite: a bench file with NaN or -Inf is refused with
// its file and line (exit 2), in text and JSON alike.
func TestRow50_GateNonFinite(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	base, err := os.ReadFile(filepath.Join("..", "..", "baselines", "sim.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"BenchmarkPerf/profile=basic/scenario=startup-2 1 NaN ns/op\n",
		"BenchmarkPerf/profile=basic/scenario=startup-2 1 100 ns/op -Inf tok/s\n",
	} {
		path := filepath.Join(t.TempDir(), "new.txt")
		if err := os.WriteFile(path, append(base, line...), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, format := range []string{"text", "json"} {
			runCLI(t, context.Background(), "gate", "--baseline", "../../baselines/sim.txt", "--new", path, "--format", format).
				wantCode(t, 2, path+":", "a value must be a finite number")
		}
	}
}

// TestRow50_BadProfileValue: a profile value the simulator refuses is bad
// input (exit 2), not a failed run.
func TestRow50_BadProfileValue(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte("name: bad\nmodel: Qwen/Qwen3-0.6B\nflags:\n  max-model-len: banana\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runCLI(t, context.Background(), "run", "--profile", path, "--concurrency", "1", "--requests", "1").
		wantCode(t, 2, "argument --max-model-len: invalid int value: 'banana'")
}
