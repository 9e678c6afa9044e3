// Package benchname is the one builder and parser of the suite's
// benchmark names (docs/bench-format.md): profile=P/scenario=S/POINT,
// where POINT is conc=N or rate=R, optionally after a workload class
// (prompt=short/conc=1), ramp=STRATEGY for a ramp-up, or summary=knee for
// a sweep's knee. The suite,
// perf_test.go, the upgrade gate and the diagnosis build and read names
// only through it, the way x/perf's benchproc owns its keys.
package benchname

import (
	"fmt"
	"strconv"
	"strings"
)

// Bench is the benchmark function's name without "Benchmark": the gate
// and benchfmt write a run as Perf/NAME.
const Bench = "Perf"

// Short drops the "Perf/" the gate and benchfmt write before a run name.
func Short(name string) string { return strings.TrimPrefix(name, Bench+"/") }

// StartupScenario names a profile's start point: ready time and cold TTFT.
const StartupScenario = "startup"

// The keys of a name's first two elements (benchproc's /profile and
// /scenario).
const (
	KeyProfile  = "profile"
	KeyScenario = "scenario"
)

// ConfigDataset is the file configuration key (a `dataset: ...` line
// before a benchmark) that names the data set a scenario sent: the
// dataset package writes it, the gate refuses to compare results whose
// values differ.
const ConfigDataset = "dataset"

// The keys of a point's elements.
const (
	keyClass   = "prompt"
	keyConc    = "conc"
	keyRate    = "rate"
	keyTrace   = "trace"
	keyRamp    = "ramp"
	keySummary = "summary"
)

// Knee is the point that carries a sweep's knee.
const Knee = keySummary + "=knee"

// Capacity is the point that carries a capacity search's result.
const Capacity = keySummary + "=capacity"

// Name is one run's name: profile, scenario and point.
type Name struct {
	Profile  string
	Scenario string
	// Point is the scenario's point ("prompt=short/conc=1", "rate=4",
	// "summary=knee"); empty for the start point.
	Point string
}

// String writes profile=P/scenario=S[/POINT], the suite's run name.
func (n Name) String() string {
	return ProfileElem(n.Profile) + "/" + n.Sub()
}

// Sub is the name below the profile: scenario=S[/POINT], what a
// profile's b.Run names.
func (n Name) Sub() string {
	s := ScenarioElem(n.Scenario)
	if n.Point != "" {
		s += "/" + n.Point
	}
	return s
}

// ProfileElem is the profile's element of a name: profile=P.
func ProfileElem(profile string) string { return KeyProfile + "=" + profile }

// ScenarioElem is the scenario's element of a name: scenario=S.
func ScenarioElem(scenario string) string { return KeyScenario + "=" + scenario }

// ClosedPoint is a closed-loop point's key, after the class when the
// scenario runs one point per class (class "" for a mix).
func ClosedPoint(class string, concurrency int) string {
	return classPrefix(class) + keyConc + "=" + strconv.Itoa(concurrency)
}

// OpenPoint is an open-loop point's key at rate (as written: "4", "inf").
func OpenPoint(class, rate string) string {
	return classPrefix(class) + keyRate + "=" + rate
}

// TracePoint is the key of a trace replayed at speed (as written: "1",
// "2" for twice as fast).
func TracePoint(class, speed string) string {
	return classPrefix(class) + keyTrace + "=" + speed
}

// RampPoint is the key of a ramp-up that climbs by strategy ("linear",
// "exponential").
func RampPoint(class, strategy string) string {
	return classPrefix(class) + keyRamp + "=" + strategy
}

func classPrefix(class string) string {
	if class == "" {
		return ""
	}
	return keyClass + "=" + class + "/"
}

// Parse reads a run name as the suite writes it, with or without the
// "Perf/" (or "BenchmarkPerf/") in front; not go test's -N suffix.
func Parse(s string) (Name, error) {
	rest := strings.TrimPrefix(strings.TrimPrefix(s, "Benchmark"), Bench+"/")
	elems := strings.SplitN(rest, "/", 3)
	if len(elems) < 2 {
		return Name{}, fmt.Errorf("bench name %q: want profile=P/scenario=S[/point]", s)
	}
	p, okP := strings.CutPrefix(elems[0], KeyProfile+"=")
	sc, okS := strings.CutPrefix(elems[1], KeyScenario+"=")
	if !okP || !okS || p == "" || sc == "" {
		return Name{}, fmt.Errorf("bench name %q: want profile=P/scenario=S[/point]", s)
	}
	n := Name{Profile: p, Scenario: sc}
	if len(elems) == 3 {
		n.Point = elems[2]
	}
	return n, nil
}

// Point is a point key read back: its class, and its concurrency or rate.
type Point struct {
	Class       string
	Concurrency int    // closed loop; 0 otherwise
	Rate        string // open loop; "" otherwise
	Trace       string // a trace's replay speed; "" otherwise
	Ramp        string // a ramp-up's strategy; "" otherwise
	Summary     string // "knee" for the knee's point
}

// ParsePoint reads a point key ("prompt=short/conc=1", "rate=inf").
// Elements it does not know are ignored.
func ParsePoint(key string) Point {
	var p Point
	for _, e := range strings.Split(key, "/") {
		k, v, _ := strings.Cut(e, "=")
		switch k {
		case keyClass:
			p.Class = v
		case keyConc:
			p.Concurrency, _ = strconv.Atoi(v)
		case keyRate:
			p.Rate = v
		case keyTrace:
			p.Trace = v
		case keyRamp:
			p.Ramp = v
		case keySummary:
			p.Summary = v
		}
	}
	return p
}

// Short names a point for a chart's legend: "c8", "short c1", "4/s".
func (p Point) Short() string {
	var parts []string
	if p.Class != "" {
		parts = append(parts, p.Class)
	}
	switch {
	case p.Rate != "":
		parts = append(parts, p.Rate+"/s")
	case p.Trace != "":
		parts = append(parts, "trace ×"+p.Trace)
	case p.Ramp != "":
		parts = append(parts, p.Ramp+" ramp")
	case p.Concurrency > 0:
		parts = append(parts, "c"+strconv.Itoa(p.Concurrency))
	}
	return strings.Join(parts, " ")
}
