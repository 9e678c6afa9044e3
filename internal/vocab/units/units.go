// Package units is the one home of the benchmark units the suite reports
// (docs/bench-format.md): each unit's name, the direction in which it is
// better, its scale and the label a report gives its column. The suite,
// the gate, thresholds.yaml's defaults, the knee, the diagnosis and the
// reports read them from here, so adding a unit is one line below plus
// its computation.
//
// The package imports nothing of the project, so the packages that draw
// charts or diagnose a results folder need not import the harness that
// runs the load.
package units

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Unit is one bench unit: a column of `go test -bench Perf`'s output.
type Unit struct {
	// Name is the unit as written in the bench output: "ttft-p99-ns".
	Name string
	// Better is the direction in which the unit is better; None when it
	// is shown but not gated.
	Better Direction
	// Label names the unit in a report's table heading: "TTFT p99".
	Label string
	// Digits is how many decimals a report's table shows of a plain
	// number (KindNumber); durations and percentages have their own.
	Digits int
	// Headline marks one of a point's few headline metrics: the gate
	// judges these (docs/gate.md, "What is gated"); the suite's other
	// units with a direction are reported with benchstat's numbers only.
	Headline bool
}

// Kind is how the unit's values are scaled (from its name).
func (u Unit) Kind() Kind { return KindOf(u.Name) }

// Gated reports whether the gate compares the unit by default.
func (u Unit) Gated() bool { return u.Better == Lower || u.Better == Higher }

var all []Unit

// def declares a unit: the one line that adds one.
func def(name string, better Direction, label string, digits int) string {
	all = append(all, Unit{Name: name, Better: better, Label: label, Digits: digits})
	return name
}

// headline marks the unit called name, just declared, as a headline
// metric (Unit.Headline): the one place that says what the gate judges.
func headline(name string) string {
	all[len(all)-1].Headline = true
	return name
}

// The units, in the order of docs/bench-format.md's table. Each line is
// the whole declaration of a unit; TestDocsTable ties it to the docs.
var (
	// Per run: latency percentiles (per class too, prefixed "<class>-").
	TTFTP50 = headline(def("ttft-p50-ns", Lower, "TTFT p50", 0))
	TTFTP99 = def("ttft-p99-ns", Lower, "TTFT p99", 0)
	TPOTP50 = headline(def("tpot-p50-ns", Lower, "TPOT p50", 0))
	TPOTP99 = def("tpot-p99-ns", Lower, "TPOT p99", 0)
	ITLP99  = def("itl-p99-ns", Lower, "ITL p99", 0)
	E2ELP99 = headline(def("e2el-p99-ns", Lower, "E2EL p99", 0))
	// Per run: throughput and failures.
	TokPerSec = headline(def("tok/s", Higher, "tok/s", 1))
	ReqPerSec = def("req/s", Higher, "req/s", 2)
	Goodput   = def("goodput-req/s", Higher, "goodput", 2)
	ErrPct    = def("err-%", Lower, "err", 0)
	// Per run: read from the server's /metrics.
	KVPeakPct    = def("kv-peak-%", None, "KV peak", 0)
	PrefixHitPct = def("prefix-hit-%", Higher, "prefix hit", 0)
	Preemptions  = def("preemptions", Lower, "preemptions", 0)
	RunningPeak  = def("running-peak", None, "running peak", 0)
	WaitingPeak  = def("waiting-peak", None, "waiting peak", 0)
	JitterPct    = def("tok/s-cv-%", None, "tok/s CV", 0)
	TokPerChunk  = def("tok/chunk", None, "tok/chunk", 2)
	PromptTok    = def("prompt-tok", None, "prompt tok", 1)
	SpecAccept   = def("spec-accept-%", None, "spec accept", 0)
	// Per run: the GPUs' power (package telemetry), when a source reports it.
	PowerAvgW      = def("power-avg-w", Lower, "avg power", 0)
	JoulesPerToken = def("j/tok", Lower, "J/token", 3)
	// Per run: the runner control (package runnerctl), a fixed CPU
	// workload in the client process timed before, during and after the
	// run: the machine's speed, not the server's (docs/gate.md, "A slower
	// runner"). RunnerIdle is its probes before and after the run alone,
	// the server idle: a server on the client's host that burns more CPU
	// under load does not move it.
	RunnerCPU      = def("runner-cpu-ns", None, "runner CPU", 0)
	RunnerIdle     = def("runner-idle-ns", None, "runner CPU, server idle", 0)
	RunnerParallel = def("runner-par-ns", None, "runner CPU, all cores", 0)
	// The start-up point (scenario=startup).
	Ready        = def("ready-ns", Lower, "ready", 0)
	ColdTTFT     = headline(def("cold-ttft-ns", Lower, "cold TTFT", 0))
	BlocksPerGiB = def("kv-blocks/GiB", None, "KV blocks/GiB", 1)
	// The sweep's knee (summary=knee).
	Knee        = def("knee-conc", Higher, "knee", 0)
	Saturation  = def("saturation-conc", Higher, "saturation", 0)
	SLOConc     = def("slo-conc", Higher, "SLO concurrency", 0)
	Recommended = def("recommended-conc", Higher, "recommended", 0)
	// The capacity under the goodput SLO (summary=capacity).
	CapacityRate  = headline(def("slo-capacity-req/s", Higher, "SLO capacity", 2))
	CapacityConc  = headline(def("slo-capacity-conc", Higher, "SLO capacity conc", 0))
	CapacityUsers = def("slo-capacity-users", None, "≈ users", 1)
	// A ramp-up's point (ramp=STRATEGY): the offered rates where its
	// windows' P99s left the SLO and where its throughput stopped
	// following the offered rate (docs/load-shapes.md).
	RampSLOExit    = def("ramp-slo-exit-req/s", Higher, "ramp SLO exit", 2)
	RampSaturation = def("ramp-saturation-req/s", Higher, "ramp saturation", 2)
)

// NsPerOp is benchfmt's own unit: the wall time of one iteration.
const NsPerOp = "ns/op"

// All returns every unit the suite reports, in the docs' order.
func All() []Unit { return slices.Clone(all) }

// Names returns the names of All.
func Names() []string {
	out := make([]string, len(all))
	for i, u := range all {
		out[i] = u.Name
	}
	return out
}

// Lookup returns the unit called name; ok false for a name the suite does
// not report as such (a per-class unit, ns/op, a user's own).
func Lookup(name string) (u Unit, ok bool) {
	i := slices.IndexFunc(all, func(u Unit) bool { return u.Name == name })
	if i < 0 {
		return Unit{}, false
	}
	return all[i], true
}

// Digits returns the decimals a table shows of the unit's plain numbers
// (0 for a unit the suite does not declare).
func Digits(name string) int {
	u, _ := Lookup(name)
	return u.Digits
}

// Label returns the unit's column label; for a class's figure
// ("short-ttft-p99-ns") the class and the unit's label ("short TTFT p99");
// else the name itself.
func Label(name string) string {
	if u, ok := Lookup(name); ok {
		return u.Label
	}
	if class, rest, ok := strings.Cut(name, "-"); ok {
		if u, ok := Lookup(rest); ok { // a class's figure: "short-ttft-p99-ns"
			return class + " " + u.Label
		}
	}
	return name
}

// Headline reports whether the gate judges the unit called name: a
// headline unit of the suite, or a unit the suite does not declare (a
// user's own benchmark's: nothing says it is less than a headline). The
// suite's other units, and their per-class forms ("short-ttft-p99-ns"),
// are reported, not judged.
func Headline(name string) bool {
	if u, ok := Lookup(name); ok {
		return u.Headline
	}
	if _, rest, ok := strings.Cut(name, "-"); ok {
		if _, ok := Lookup(rest); ok {
			return false
		}
	}
	return name != NsPerOp
}

// DefaultDirection is the direction of a unit nothing else decides (no
// Unit line in the bench output, nothing in thresholds.yaml): the unit's
// own; else lower for any duration (a per-class latency, ns/op); else
// None (shown, not gated).
func DefaultDirection(name string) Direction {
	if u, ok := Lookup(name); ok {
		return u.Better
	}
	if KindOf(name) == KindNanoseconds {
		return Lower
	}
	return None
}

// Direction says which way a metric is better.
type Direction int

// The directions. Unset means nothing decided it yet; None means the metric
// is shown but never gated.
const (
	Unset Direction = iota
	Lower
	Higher
	None
)

// String returns the word used in YAML and in benchfmt's `better=` key.
func (d Direction) String() string {
	switch d {
	case Lower:
		return "lower"
	case Higher:
		return "higher"
	case None:
		return "none"
	default:
		return "unset"
	}
}

// ParseDirection reads lower, higher or none (benchfmt's better= values
// and the thresholds file's better: entries).
func ParseDirection(s string) (Direction, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "lower":
		return Lower, nil
	case "higher":
		return Higher, nil
	case "none":
		return None, nil
	default:
		return Unset, fmt.Errorf("direction %q: want lower, higher or none", s)
	}
}

// Kind says how a metric's values are written in the bench output and in
// the thresholds file. It follows from the unit's name.
type Kind int

// The metric kinds.
const (
	// KindNumber: a plain number (tok/s, req/s, preemptions).
	KindNumber Kind = iota
	// KindNanoseconds: a unit ending in -ns; limits are durations (200ms).
	KindNanoseconds
	// KindPercent: a unit ending in -%; values are percentages 0–100,
	// limits are written with a % sign (5%).
	KindPercent
)

// KindOf returns the kind of a bench unit.
func KindOf(unit string) Kind {
	switch {
	case strings.HasSuffix(unit, "-ns") || unit == NsPerOp || unit == "ns":
		return KindNanoseconds
	case strings.HasSuffix(unit, "-%") || unit == "%":
		return KindPercent
	default:
		return KindNumber
	}
}

// FormatValue writes v (in the unit's own scale) for a person: durations
// as such, percentages with a %, numbers with 4 significant digits.
func FormatValue(unit string, v float64) string {
	switch KindOf(unit) {
	case KindNanoseconds:
		return time.Duration(v).Round(durationRounding(v)).String()
	case KindPercent:
		return strconv.FormatFloat(v, 'g', 4, 64) + "%"
	default:
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
}

// durationRounding keeps about 4 significant digits of a duration in ns.
func durationRounding(ns float64) time.Duration {
	switch a := math.Abs(ns); {
	case a >= 10e9:
		return 10 * time.Millisecond
	case a >= 10e6:
		return 10 * time.Microsecond
	case a >= 10e3:
		return 10 * time.Nanosecond
	default:
		return 1
	}
}

// Tails are the tail percentiles the gate judges per profile and metric
// (docs/gate.md, "Tails"): each one's rows of a profile are tested
// together, by runs, as one test of the profile. E2EL p99 is a headline
// metric (Unit.Headline) and judged with those.
var Tails = []string{TTFTP99, TPOTP99, ITLP99}

// IsTail reports whether unit is one of Tails.
func IsTail(unit string) bool { return slices.Contains(Tails, unit) }
