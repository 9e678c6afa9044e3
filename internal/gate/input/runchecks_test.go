package input

import "testing"

func TestReadRunChecks(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []RunCheck
	}{
		// go test's block for a failed benchmark, with a wrapped detail
		// and a log line that is not a check.
		{name: "block", text: "--- FAIL: BenchmarkPerf/profile=basic/scenario=ttft-tpot/prompt=medium/conc=1\n" +
			"    perf_test.go:212: " + CheckLine("FAIL", "reconcile/generation_tokens", "server 64, client 65") + "\n" +
			"        a continuation line\n" +
			"    perf_test.go:215: warning: something else\n" +
			"    perf_test.go:212: " + CheckLine("INVALID", "gpu/throttle", "SW power cap\nfor 3 of 5 samples") + "\n" +
			"BenchmarkPerf/profile=basic/scenario=startup-2\t1\t1 ns/op\n",
			want: []RunCheck{
				{Benchmark: "Perf/profile=basic/scenario=ttft-tpot/prompt=medium/conc=1", Status: "FAIL", Name: "reconcile/generation_tokens", Detail: "server 64, client 65"},
				{Benchmark: "Perf/profile=basic/scenario=ttft-tpot/prompt=medium/conc=1", Status: "INVALID", Name: "gpu/throttle", Detail: "SW power cap for 3 of 5 samples"},
			}},
		// The parents' FAIL lines carry no check; a check line outside a
		// block is not one.
		{name: "parents", text: "--- FAIL: BenchmarkPerf/profile=basic\n--- FAIL: BenchmarkPerf\nFAIL\n    x.go:1: check: FAIL a: b\n"},
		// A log line that only looks like a check is skipped.
		{name: "malformed", text: "--- FAIL: BenchmarkPerf/x\n    perf_test.go:1: check: FAIL\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := readRunChecks([]byte(tc.text))
			if len(got) != len(tc.want) {
				t.Fatalf("got %d checks %+v, want %d", len(got), got, len(tc.want))
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("check %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}
