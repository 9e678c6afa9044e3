package cliflags

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/internal/request/load"
)

// parseLoad binds LoadFlags to a fresh flag set and parses args.
func parseLoad(t *testing.T, args ...string) (load.Config, error) {
	t.Helper()
	var o LoadFlags
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	Load(fs, &o)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o.Parse(fs.Changed)
}

// TestLoadRefuse: each mistake is refused naming the flag and the fix.
func TestLoadRefuse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--requests", "5"}, "--concurrency N (closed loop) or --rate R"},                                       // no loop
		{[]string{"--concurrency", "0", "--requests", "5"}, "--concurrency 0: want at least 1"},                          // an empty closed loop
		{[]string{"--rate", "fast", "--requests", "5"}, `--rate "fast"`},                                                 // not a number
		{[]string{"--rate", "NaN", "--requests", "5"}, `--rate "NaN"`},                                                   // not a rate
		{[]string{"--concurrency", "2", "--rate", "3", "--requests", "5"}, "exclude each other"},                         // both loops
		{[]string{"--concurrency", "2"}, "bound the run: --requests N (vLLM's --num-prompts)"},                           // unbounded
		{[]string{"--rate", "inf", "--duration", "10s"}, "--rate inf sends every request at once"},                       // inf needs a count
		{[]string{"--concurrency", "2", "--requests", "0"}, "--requests 0: want at least 1"},                             // no requests
		{[]string{"--concurrency", "2", "--duration", "-1s"}, "--duration -1s"},                                          // negative duration
		{[]string{"--concurrency", "2", "--requests", "5", "--warmup", "-1"}, "--warmup -1"},                             // negative warm-up
		{[]string{"--concurrency", "2", "--requests", "5", "--max-concurrency", "4"}, "caps an open loop"},               // cap on a closed loop
		{[]string{"--rate", "2", "--requests", "5", "--max-concurrency", "-1"}, "--max-concurrency -1"},                  // negative cap
		{[]string{"--rate", "2", "--requests", "5", "--burstiness", "0"}, "--burstiness 0"},                              // no distribution
		{[]string{"--concurrency", "2", "--requests", "5", "--burstiness", "0.5"}, "use it with --rate"},                 // burstiness of a closed loop
		{[]string{"--concurrency", "2", "--requests", "5", "--grace", "10s"}, "--grace applies after"},                   // grace without deadline
		{[]string{"--concurrency", "2", "--duration", "5s", "--grace", "0s"}, "--grace 0s"},                              // no grace
		{[]string{"--concurrency", "2", "--requests", "5", "--max-consecutive-failures", "-1"}, "want a positive count"}, // negative streak
	} {
		if _, err := parseLoad(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want it to contain %q", tc.args, err, tc.want)
		}
	}
}

// TestLoadAccept: what the flags accept is a Config that Validate
// accepts too, with the flags' values.
func TestLoadAccept(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want load.Config
	}{
		{[]string{"--concurrency", "4", "--requests", "20"}, load.Config{Concurrency: 4, Requests: 20, Grace: load.DefaultGrace, Warmup: 1, MaxConsecutiveFailures: load.DefaultMaxConsecutiveFailures}},
		{[]string{"--rate", "2.5", "--burstiness", "0.5", "--duration", "1m", "--grace", "5s", "--max-concurrency", "8", "--warmup", "0", "--seed", "7"},
			load.Config{Rate: 2.5, Burstiness: 0.5, Duration: time.Minute, Grace: 5 * time.Second, MaxConcurrency: 8, Seed: 7, MaxConsecutiveFailures: load.DefaultMaxConsecutiveFailures}},
		{[]string{"--rate", "inf", "--requests", "10", "--max-consecutive-failures", "0"}, load.Config{Rate: math.Inf(1), Burstiness: load.DefaultBurstiness, Requests: 10, Grace: load.DefaultGrace, Warmup: 1}},
	} {
		got, err := parseLoad(t, tc.args...)
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v:\n got %+v\nwant %+v", tc.args, got, tc.want)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("%v: the flags accept what Validate refuses: %v", tc.args, err)
		}
	}
}
