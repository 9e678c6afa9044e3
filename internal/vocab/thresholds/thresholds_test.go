package thresholds

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/testphase"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

func load(t *testing.T, name string) (*Set, error) {
	t.Helper()
	return Load(filepath.Join("testdata", name))
}

func TestParseErrors(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	for _, tc := range []struct {
		file string // one testdata file per failure
		want string // file:line:col and the words that say how to fix it
	}{
		// A misspelt key is named with its position and a suggestion.
		{"unknown-key.yaml", `unknown-key.yaml:3:3: unknown key "min_efect" (did you mean "min_effect"?)`},
		// A duration without a unit would be a guess.
		{"bare-duration.yaml", `bare-duration.yaml:2:22: "200" is not a duration: write it with a unit`},
		// A percentage needs its % sign.
		{"bare-percent.yaml", `bare-percent.yaml:1:17: "0.05": write a percentage with a % sign`},
		// A count that is not a number.
		{"bad-count.yaml", `bad-count.yaml:2:16: "many": want a whole number of runs, at least 2`},
		// A rule without match.
		{"no-match.yaml", `no-match.yaml:2:5: overrides[0]: missing match`},
		// Run-level settings under a metric selector.
		{"metric-checks.yaml", `metric-checks.yaml:2:5: overrides[0]: match.metric selects metrics, but checks`},
		// The old name of overrides:, refused with the new one.
		{"old-rules.yaml", `old-rules.yaml:1:1: rules: is now called overrides:`},
		// A direction that is not one of the three words.
		{"bad-direction.yaml", `bad-direction.yaml:2:10: better: "up": want lower, higher or none`},
		// Bounds that exclude every value.
		{"min-above-max.yaml", `min-above-max.yaml:2:10: slo: tok/s: min 10 is above max 5`},
		// Broken YAML.
		{"bad-yaml.yaml", `bad-yaml.yaml:1: invalid YAML: did not find expected`},
		// A wrong type is named as a person reads it.
		{"wrong-type.yaml", `wrong-type.yaml:2:11: "maybe" is a str where true or false is expected`},
		// An unknown bound inside an SLO.
		{"unknown-bound.yaml", `unknown-bound.yaml:2:11: slo: tok/s: unknown bound "below": use max or min`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			_, err := load(t, tc.file)
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if got := err.Error(); !strings.Contains(got, tc.want) {
				t.Errorf("error:\n got %s\nwant it to contain %s", got, tc.want)
			}
		})
	}
}

func TestScopeResolution(t *testing.T) {
	t.Parallel()
	s, err := load(t, "full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	basic := s.Scope("basic", "ttft-tpot")
	if got, want := *basic.SLO["ttft-p99-ns"].Max, float64(2*time.Second); got != want {
		t.Errorf("basic ttft-p99 max = %v, want %v", got, want)
	}
	if got, want := *basic.SLO["tok/s"].Min, 100.0; got != want {
		t.Errorf("tok/s min = %v, want %v", got, want)
	}
	if got, want := basic.Checks.KVPeakMax, 0.80; got != want {
		t.Errorf("kv peak max = %v, want %v", got, want)
	}
	if got, want := basic.Checks.PrefixHitMin, DefaultChecks.PrefixHitMin; got != want {
		t.Errorf("prefix hit min = %v, want the default %v", got, want)
	}
	if !basic.Checks.Strict {
		t.Error("basic: strict should stay the default true")
	}
	if got, want := basic.MaxErrorRate, 0.01; got != want {
		t.Errorf("max error rate = %v, want %v", got, want)
	}
	if got, want := basic.Goodput, (Goodput{TTFT: 500 * time.Millisecond, TPOT: 50 * time.Millisecond}); got != want {
		t.Errorf("goodput = %+v, want %+v", got, want)
	}

	low := s.Scope("low-latency", "ttft-tpot")
	if got, want := *low.SLO["ttft-p99-ns"].Max, float64(300*time.Millisecond); got != want {
		t.Errorf("low-latency ttft-p99 max = %v, want %v (the rule overrides the top level)", got, want)
	}
	if low.Checks.Strict {
		t.Error("low-latency: strict should be false from its rule")
	}
	if got, want := *low.SLO["tok/s"].Min, 100.0; got != want {
		t.Errorf("low-latency keeps tok/s min from the top: %v, want %v", got, want)
	}

	sweep := s.Scope("basic", "concurrency-sweep")
	if got, want := sweep.Knee, (Knee{Throughput: "tok/s", Latency: "tpot-p99-ns", MinGain: 0.30, MinLatencyGrowth: DefaultKnee.MinLatencyGrowth}); !reflect.DeepEqual(got, want) {
		t.Errorf("knee = %+v, want %+v", got, want)
	}
}

func TestGateAndBetter(t *testing.T) {
	t.Parallel()
	s, err := load(t, "full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		profile, scenario, metric string
		wantEffect                float64
		wantBetter                units.Direction
	}{
		// Top-level gate settings apply everywhere.
		{"basic", "poisson", "ttft-p99-ns", 0.03, units.Unset},
		// The itl rule raises the minimum effect and drops the direction.
		{"basic", "ttft-tpot", "itl-p99-ns", 0.10, units.None},
		// Its scenario glob does not match the sweep.
		{"basic", "concurrency-sweep", "itl-p99-ns", 0.03, units.Unset},
		// The top level's better: entry.
		{"basic", "poisson", "kv-peak-%", 0.03, units.Lower},
	} {
		g := s.Gate(tc.profile, tc.scenario, tc.metric)
		if g.MinEffect != tc.wantEffect || g.Alpha != 0.01 || g.MinSamples != 8 || g.Confidence != DefaultGate.Confidence {
			t.Errorf("Gate(%s, %s, %s) = %+v, want min effect %v, alpha 0.01, 8 samples", tc.profile, tc.scenario, tc.metric, g, tc.wantEffect)
		}
		if got := s.Better(tc.profile, tc.scenario, tc.metric); got != tc.wantBetter {
			t.Errorf("Better(%s, %s, %s) = %v, want %v", tc.profile, tc.scenario, tc.metric, got, tc.wantBetter)
		}
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	s, err := Parse("empty.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	sc := s.Scope("basic", "ttft-tpot")
	if sc.Checks != DefaultChecks || !reflect.DeepEqual(sc.Knee, DefaultKnee) || len(sc.SLO) != 0 || sc.Goodput.Set() {
		t.Errorf("empty file scope = %+v, want the defaults", sc)
	}
	if g := s.Gate("basic", "x", "tok/s"); g != DefaultGate {
		t.Errorf("empty file gate = %+v, want %+v", g, DefaultGate)
	}
}

func TestLimitCheck(t *testing.T) {
	t.Parallel()
	max, min := float64(200*time.Millisecond), 100.0
	if got := (Limit{Max: &max}).Check("ttft-p99-ns", float64(250*time.Millisecond)); got != "ttft-p99-ns = 250ms is above the limit 200ms" {
		t.Errorf("max check: %q", got)
	}
	if got := (Limit{Min: &min}).Check("tok/s", 99.5); got != "tok/s = 99.5 is below the limit 100" {
		t.Errorf("min check: %q", got)
	}
	if got := (Limit{Max: &max}).Check("ttft-p99-ns", float64(150*time.Millisecond)); got != "" {
		t.Errorf("passing check: %q", got)
	}
}

// The repository's own thresholds.yaml must parse.
func TestRepositoryFile(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("../../../thresholds.yaml"); os.IsNotExist(err) {
		t.Skip("no thresholds.yaml at the repository root yet")
	}
	if _, err := Load("../../../thresholds.yaml"); err != nil {
		t.Fatal(err)
	}
}

// TestWithStrict: strictness set over every rule, the rest unchanged.
func TestWithStrict(t *testing.T) {
	s, err := Parse("t.yaml", []byte("checks: {strict: true, kv_peak_max: 80%}\noverrides:\n  - match: {profile: a}\n    checks: {strict: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	lenient := s.WithStrict(false)
	for _, p := range []string{"a", "b"} {
		if sc := lenient.Scope(p, "x"); sc.Checks.Strict || sc.Checks.KVPeakMax != 0.8 {
			t.Errorf("profile %s: strict %v, kv_peak_max %g: want false, 0.8", p, sc.Checks.Strict, sc.Checks.KVPeakMax)
		}
	}
	if !s.Scope("b", "x").Checks.Strict {
		t.Error("WithStrict changed the original")
	}
}

// TestCapacityScope: capacity: falls back to the shipped file's settings,
// a file's top level overrides them, and an override replaces them for its
// profiles and scenarios.
func TestCapacityScope(t *testing.T) {
	t.Parallel()
	s, err := Parse("capacity.yaml", []byte(`capacity: {tolerance: 5%}
overrides:
  - match: {profile: low-latency}
    capacity: {goodput_min: 95%, max_runs: 20, max_time: 5m}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Scope("basic", "slo-capacity").Capacity, (Capacity{GoodputMin: DefaultCapacity.GoodputMin, Tolerance: 0.05, MaxRuns: DefaultCapacity.MaxRuns, MaxRun: DefaultCapacity.MaxRun, MaxTime: DefaultCapacity.MaxTime}); got != want {
		t.Errorf("basic: %+v, want %+v", got, want)
	}
	if got, want := s.Scope("low-latency", "slo-capacity").Capacity, (Capacity{GoodputMin: 0.95, Tolerance: 0.05, MaxRuns: 20, MaxRun: DefaultCapacity.MaxRun, MaxTime: 5 * time.Minute}); got != want {
		t.Errorf("low-latency: %+v, want %+v", got, want)
	}
	if _, err := Parse("bad.yaml", []byte("capacity: {max_runs: 1}\n")); err == nil || !strings.Contains(err.Error(), "at least 2") {
		t.Errorf("max_runs 1: error %v, want at least 2 runs", err)
	}
	if got := (Capacity{GoodputMin: 0.99, Tolerance: 0.1, MaxRuns: 14, MaxRun: 2 * time.Minute, MaxTime: 30 * time.Minute}); DefaultCapacity != got {
		t.Errorf("DefaultCapacity = %+v, want thresholds.yaml's %+v", DefaultCapacity, got)
	}
}
