package benchname_test

import (
	"testing"

	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
)

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n    benchname.Name
		want string
	}{
		// a closed-loop point of a class
		{benchname.Name{"basic", "ttft-tpot", benchname.ClosedPoint("short", 1)}, "profile=basic/scenario=ttft-tpot/prompt=short/conc=1"},
		// an open-loop point of a mix
		{benchname.Name{"basic", "poisson", benchname.OpenPoint("", "inf")}, "profile=basic/scenario=poisson/rate=inf"},
		// the start point has no point
		{benchname.Name{"basic", benchname.StartupScenario, ""}, "profile=basic/scenario=startup"},
		// the knee
		{benchname.Name{"basic", "concurrency-sweep", benchname.Knee}, "profile=basic/scenario=concurrency-sweep/summary=knee"},
	} {
		if got := c.n.String(); got != c.want {
			t.Errorf("String() = %q, want %q", got, c.want)
		}
		for _, s := range []string{c.want, "Perf/" + c.want, "BenchmarkPerf/" + c.want} {
			got, err := benchname.Parse(s)
			if err != nil || got != c.n {
				t.Errorf("Parse(%q) = %+v, %v; want %+v", s, got, err, c.n)
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "Perf/x", "profile=basic", "scenario=a/profile=b", "profile=/scenario=a"} {
		if _, err := benchname.Parse(s); err == nil {
			t.Errorf("Parse(%q): no error", s)
		}
	}
}

func TestParsePoint(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]benchname.Point{
		"prompt=short/conc=1":             {Class: "short", Concurrency: 1},
		"rate=4":                          {Rate: "4"},
		"summary=knee":                    {Summary: "knee"},
		benchname.TracePoint("", "2"):     {Trace: "2"},
		benchname.RampPoint("", "linear"): {Ramp: "linear"},
		"":                                {},
	} {
		if got := benchname.ParsePoint(key); got != want {
			t.Errorf("ParsePoint(%q) = %+v, want %+v", key, got, want)
		}
	}
	for key, want := range map[string]string{"conc=8": "c8", "prompt=short/conc=1": "short c1", "rate=inf": "inf/s", "trace=0.5": "trace ×0.5", "ramp=exponential": "exponential ramp"} {
		if got := benchname.ParsePoint(key).Short(); got != want {
			t.Errorf("Short(%q) = %q, want %q", key, got, want)
		}
	}
}
