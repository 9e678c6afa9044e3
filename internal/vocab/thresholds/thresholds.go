// Package thresholds reads thresholds.yaml: the one file that says what
// "good" means for the suite's checks (TestPerf*) and for the regression
// gate (vllmperf gate). One schema serves both:
//
//	gate:            # regression statistics (benchmath: Mann-Whitney U, Holm)
//	  alpha: 0.05
//	  min_effect: 5%
//	  min_samples: 6
//	  confidence: 0.95
//	max_error_rate: 0%   # failed requests allowed in a run
//	checks: {...}    # server-side assertions (Prometheus counters, KV cache)
//	knee: {...}      # how the concurrency sweep's knee is found (its own slo:)
//	capacity: {goodput_min: 99%, tolerance: 10%, max_runs: 14, max_run: 2m, max_time: 30m}  # the SLO capacity search
//	goodput: {ttft: 500ms, tpot: 100ms}   # per-request SLO behind goodput-req/s
//	slo:             # absolute limits on reported metrics
//	  ttft-p99-ns: {max: 2s}
//	  tok/s: {min: 100}
//	better:          # direction of a unit the bench output does not mark
//	  kv-peak-%: none
//	overrides:       # scoped overrides: later ones win over earlier ones and the top level
//	  - match: {profile: low-latency, scenario: "ttft-*", metric: "*-p99-ns"}
//	    slo: {ttft-p99-ns: {max: 300ms}}
//
// Selectors are path.Match globs; an absent selector field matches all.
// Metric names are the bench output's units (ttft-p99-ns, tok/s, err-%).
// Limits are written in each unit's natural form: durations (200ms) for
// -ns units, percentages (5%) for -% units, plain numbers otherwise.
package thresholds

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"go.yaml.in/yaml/v3"

	vllmperf "github.com/vllmperf/vllmperf"
	"github.com/vllmperf/vllmperf/internal/strictyaml"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// Gate holds the regression gate's statistics settings.
type Gate struct {
	// Alpha is the significance level, applied after Holm's correction
	// over all gated comparisons of one gate run.
	Alpha float64
	// MinEffect is the smallest relative change of the median (a fraction)
	// that can be called a regression or an improvement.
	MinEffect float64
	// MinSamples is how many runs each side needs before a comparison can
	// decide; fewer is INCONCLUSIVE.
	MinSamples int
	// Confidence is the level of the medians' confidence intervals.
	Confidence float64
	// ProfileMinEffect is the smallest median change of a profile's
	// headline rows (in their bad direction) that, with the profile's
	// combined test significant, fails the profile as a whole.
	ProfileMinEffect float64
	// RequireNoChange asks for equivalence: a row the test finds no
	// regression in, but whose intervals do not rule one out of MinEffect,
	// makes the gate INCONCLUSIVE instead of passing (docs/gate.md).
	RequireNoChange bool
	// StartSpread is the standard deviation (log scale) of one server
	// start's effect on a profile's metrics: every run of a side's
	// profile shares its start (go test -count repeats a point on one
	// server), so a change of a whole profile is judged against two
	// starts' difference as well as the runs' spread (docs/gate.md, "One
	// server start a side"). 0 judges the runs as independent draws:
	// no start-aware tests (as the interleaved upgrade gate does).
	StartSpread float64
}

// DefaultGate is the top-level gate: of the shipped thresholds.yaml.
var DefaultGate = func() (g Gate) { builtin.top.applyGate(&g); return g }()

// Checks holds the suite's server-side assertions.
type Checks struct {
	// Strict makes a check whose metric the server does not expose fail;
	// otherwise it is reported "not available" (never a pass).
	Strict bool
	// TTFTGapMax bounds mean client TTFT − mean server TTFT (network,
	// HTTP and client overhead). The client's TTFT may not be below the
	// server's by more than the histogram's rounding.
	TTFTGapMax time.Duration
	// KVPeakMax is the highest KV-cache usage (fraction) allowed during a
	// run at nominal load.
	KVPeakMax float64
	// PreemptionsMax is how many preemptions a run may cause.
	PreemptionsMax float64
	// PrefixHitMin is the lowest prefix-cache hit rate (hits/queries,
	// tokens) of a scenario that reuses prefixes with caching on;
	// PrefixHitOffMax the highest with caching off.
	PrefixHitMin, PrefixHitOffMax float64
	// RunningMinShare: the peak of num_requests_running must reach this
	// share of min(concurrency, max-num-seqs), proof that batching happens.
	RunningMinShare float64
	// DrainTimeout is how long after the load the waiting and running
	// gauges may take to fall to 0.
	DrainTimeout time.Duration
	// SimLostMax bounds the engine time the simulator lost to the host
	// during a run, as a share of the time its timing model asked for
	// (check sim_real_time): beyond it the run is INVALID, its figures the
	// host's. Servers without the simulator's pace series are not checked.
	SimLostMax float64
}

// DefaultChecks are the top-level checks: of the shipped thresholds.yaml,
// what applies where a file says nothing.
var DefaultChecks = builtinRun().Checks

// Knee says how a concurrency sweep's knee is found: saturation is the
// first point where doubling concurrency bought less than MinGain more
// throughput while Latency's value grew by at least MinLatencyGrowth.
type Knee struct {
	// Throughput is the unit whose growth is watched (default tok/s).
	Throughput string
	// Latency is the tail-latency unit that must climb (default e2el-p99-ns).
	Latency string
	// MinGain is the relative throughput gain per step below which the
	// step no longer pays (a fraction).
	MinGain float64
	// MinLatencyGrowth is the relative latency growth that marks the
	// knee together with a small gain (a fraction).
	MinLatencyGrowth float64
	// SLO holds the limits that decide the highest concurrency meeting
	// the SLO (slo-conc): the P99 the business accepts. Points above it
	// break these limits by design, so they are not the run's pass/fail
	// SLO (that is Scope.SLO). Empty: Scope.SLO decides.
	SLO map[string]Limit
}

// DefaultKnee is the top-level knee: of the shipped thresholds.yaml,
// without its slo: (a file's own slo: decides slo-conc).
var DefaultKnee = func() Knee { k := builtinRun().Knee; k.SLO = nil; return k }()

// Capacity says how a capacity search (vllmperf capacity, the capacity
// scenario) decides: the share of requests that must meet Goodput, and
// when the search stops.
type Capacity struct {
	// GoodputMin is the share of a run's requests that must meet the
	// goodput SLO for the run to pass (a fraction).
	GoodputMin float64
	// Tolerance stops the search once the lowest failing level is at most
	// (1 + Tolerance) × the highest passing one (a fraction).
	Tolerance float64
	// MaxRuns bounds the runs of one search.
	MaxRuns int
	// MaxRun bounds one run's measured phase (an open-loop run at a low
	// rate is cut to it, with fewer requests); MaxTime bounds the whole
	// search: no run starts once it has passed.
	MaxRun, MaxTime time.Duration
}

// DefaultCapacity is the top-level capacity: of the shipped thresholds.yaml.
var DefaultCapacity = builtinRun().Capacity

// Goodput is the per-request SLO behind goodput-req/s (vLLM's --goodput);
// a zero limit is not checked.
type Goodput struct {
	TTFT, TPOT, E2EL time.Duration
}

// Set reports whether any limit is given.
func (g Goodput) Set() bool { return g.TTFT > 0 || g.TPOT > 0 || g.E2EL > 0 }

// Limit is an absolute bound on a metric, in the unit's own scale.
type Limit struct {
	Max, Min *float64
}

// Scope is everything that applies to one profile and scenario.
type Scope struct {
	Checks       Checks
	Knee         Knee
	Capacity     Capacity
	Goodput      Goodput
	MaxErrorRate float64
	// SLO maps a unit to its limit.
	SLO map[string]Limit
}

// Selector picks profiles, scenarios and metrics by glob; empty matches all.
type Selector struct {
	Profile  string `yaml:"profile"`
	Scenario string `yaml:"scenario"`
	Metric   string `yaml:"metric"`
}

func (s Selector) matches(profile, scenario string) bool {
	return glob(s.Profile, profile) && glob(s.Scenario, scenario)
}

func glob(pattern, name string) bool {
	if pattern == "" {
		return true
	}
	ok, _ := path.Match(pattern, name)
	return ok
}

// Set is a parsed thresholds file. The zero value is not usable: use
// Default, Load or Parse.
type Set struct {
	// Source is the file the set came from ("" for Empty).
	Source    string
	top       layer
	diagnose  *diagnoseYAML
	parity    *parityYAML
	overrides []override
}

// builtin is the shipped thresholds.yaml (embedded): the defaults. Its
// top-level gate:, checks: and knee: settings (not its limits) apply where
// another file says nothing; TestBuiltinSetsEverything keeps it complete.
var builtin = func() *Set {
	s, err := Parse(vllmperf.ThresholdsFile+" (built in)", vllmperf.Thresholds)
	if err != nil {
		panic(err) // the shipped file is tested; a broken one stops every run
	}
	return s
}()

// builtinRun is the built-in file's top-level run settings.
func builtinRun() Scope {
	var sc Scope
	builtin.top.applyRun(&sc)
	return sc
}

// Default returns the shipped thresholds.yaml (embedded): its settings,
// limits and overrides, as if the file were read from the module root.
func Default() *Set { return builtin }

// Empty returns the set of an empty file: the shipped top-level settings
// (DefaultGate, DefaultChecks, DefaultKnee) and no limits or overrides.
func Empty() *Set { return &Set{} }

// WithStrict returns a copy of s whose checks are strict (or not)
// everywhere, over every override: as if the file ended with an override matching
// all that set checks.strict.
func (s *Set) WithStrict(strict bool) *Set {
	c := *s
	c.overrides = append(slices.Clone(s.overrides), override{layer: layer{Checks: &checksYAML{Strict: &strict}}})
	return &c
}

// Resolve finds the thresholds that apply: file when one is given (a
// missing one is an error, never a fallback), else thresholds.yaml in dir
// when it exists (dir "" for none), else the shipped file (Default).
func Resolve(file, dir string) (*Set, error) {
	if file != "" {
		return Load(file)
	}
	if dir == "" {
		return Default(), nil
	}
	s, err := Load(filepath.Join(dir, vllmperf.ThresholdsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), nil
	}
	return s, err
}

// Load reads the thresholds file at path.
func Load(file string) (*Set, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("thresholds: %w", err)
	}
	if err := checkNotEmpty(file, data); err != nil {
		return nil, err
	}
	return Parse(file, data)
}

// Parse parses a thresholds file; source names it in errors. What the file
// leaves out of gate:, checks:, capacity: and knee: (its slo: aside) is the shipped
// thresholds.yaml's top level (DefaultGate, DefaultChecks, DefaultKnee);
// its limits (slo:, max_error_rate, goodput:, better:, overrides:) are its own.
func Parse(source string, data []byte) (*Set, error) {
	var f fileYAML
	root, err := strictyaml.DecodeNode(source, data, &f, strictyaml.AllowEmpty())
	if err != nil {
		return nil, err
	}
	if f.Rules != nil {
		at := keyNode(root, "rules")
		return nil, &strictyaml.Error{File: source, Line: at.Line, Col: at.Column, Msg: "rules: is now called overrides: (the same list of match: plus settings); rename the key"}
	}
	s := &Set{Source: source, top: f.layer, diagnose: f.Diagnose, parity: f.Parity}
	items := strictyaml.Lookup(root, "overrides")
	for i, r := range f.Overrides {
		at := &yaml.Node{}
		if items != nil && i < len(items.Content) {
			at = items.Content[i]
		}
		if r.Match == nil {
			return nil, &strictyaml.Error{File: source, Line: at.Line, Col: at.Column, Msg: fmt.Sprintf("overrides[%d]: missing match: say which profile, scenario or metric the override is for (use match: {} for all)", i)}
		}
		if r.Match.Metric != "" && (r.Checks != nil || r.Knee != nil || r.Capacity != nil || r.Goodput != nil || r.MaxErrorRate != nil) {
			return nil, &strictyaml.Error{File: source, Line: at.Line, Col: at.Column, Msg: fmt.Sprintf("overrides[%d]: match.metric selects metrics, but checks, knee, capacity, goodput and max_error_rate apply to whole runs: move them to an override without match.metric", i)}
		}
		for _, pat := range []string{r.Match.Profile, r.Match.Scenario, r.Match.Metric} {
			if _, err := path.Match(pat, ""); err != nil {
				return nil, &strictyaml.Error{File: source, Line: at.Line, Col: at.Column, Msg: fmt.Sprintf("overrides[%d]: match pattern %q is not a valid glob: %v", i, pat, err)}
			}
		}
		s.overrides = append(s.overrides, override{Selector: *r.Match, layer: r.layer})
	}
	return s, nil
}

// Scope resolves the settings for one profile and scenario: defaults, the
// file's top level, then every matching override in order.
func (s *Set) Scope(profile, scenario string) Scope {
	sc := Scope{Checks: DefaultChecks, Knee: DefaultKnee, Capacity: DefaultCapacity, SLO: map[string]Limit{}}
	sc.Knee.SLO = nil // filled per scope, never shared with DefaultKnee
	apply := func(l *layer, metric string) {
		l.applyRun(&sc)
		for unit, lim := range l.SLO {
			if glob(metric, unit) {
				sc.SLO[unit] = mergeLimit(sc.SLO[unit], lim)
			}
		}
	}
	apply(&s.top, "")
	for i := range s.overrides {
		if r := &s.overrides[i]; r.matches(profile, scenario) {
			apply(&r.layer, r.Metric)
		}
	}
	return sc
}

// Gate resolves the gate's settings for one metric of one profile and
// scenario.
func (s *Set) Gate(profile, scenario, metric string) Gate {
	g := DefaultGate
	s.top.applyGate(&g)
	for i := range s.overrides {
		if r := &s.overrides[i]; r.matches(profile, scenario) && glob(r.Metric, metric) {
			r.applyGate(&g)
		}
	}
	return g
}

// Better returns the direction the file gives metric, or units.Unset when
// it gives none (the caller then reads the bench output's Unit lines, then
// units.DefaultDirection).
func (s *Set) Better(profile, scenario, metric string) units.Direction {
	d := s.top.Better[metric]
	for i := range s.overrides {
		if r := &s.overrides[i]; r.matches(profile, scenario) && glob(r.Metric, metric) {
			if v, ok := r.Better[metric]; ok {
				d = v
			} else if v, ok := r.Better["*"]; ok {
				d = v
			}
		}
	}
	return units.Direction(d)
}

// Units lists every unit the file names in slo: or better:, sorted.
func (s *Set) Units() []string {
	seen := map[string]bool{}
	add := func(l *layer) {
		for u := range l.SLO {
			seen[u] = true
		}
		for u := range l.Better {
			seen[u] = true
		}
	}
	add(&s.top)
	for i := range s.overrides {
		add(&s.overrides[i].layer)
	}
	out := make([]string, 0, len(seen))
	for u := range seen {
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}

func mergeLimit(a, b Limit) Limit {
	if b.Max != nil {
		a.Max = b.Max
	}
	if b.Min != nil {
		a.Min = b.Min
	}
	return a
}

// Check tests v against the limit and says why it fails ("" when it
// passes).
func (l Limit) Check(unit string, v float64) string {
	if l.Max != nil && v > *l.Max {
		return fmt.Sprintf("%s = %s is above the limit %s", unit, units.FormatValue(unit, v), units.FormatValue(unit, *l.Max))
	}
	if l.Min != nil && v < *l.Min {
		return fmt.Sprintf("%s = %s is below the limit %s", unit, units.FormatValue(unit, v), units.FormatValue(unit, *l.Min))
	}
	return ""
}

// String writes the limit for a person: "≤ 200ms", "≥ 100", "50–200".
func (l Limit) String(unit string) string {
	switch {
	case l.Max != nil && l.Min != nil:
		return units.FormatValue(unit, *l.Min) + " – " + units.FormatValue(unit, *l.Max)
	case l.Max != nil:
		return "≤ " + units.FormatValue(unit, *l.Max)
	case l.Min != nil:
		return "≥ " + units.FormatValue(unit, *l.Min)
	default:
		return "none"
	}
}

// yaml shapes ---------------------------------------------------------------

// layer is what the top level and each override may set; nil/absent = inherit.
type layer struct {
	Gate         *gateYAML            `yaml:"gate"`
	Checks       *checksYAML          `yaml:"checks"`
	Knee         *kneeYAML            `yaml:"knee"`
	Capacity     *capacityYAML        `yaml:"capacity"`
	Goodput      *goodputYAML         `yaml:"goodput"`
	MaxErrorRate *Fraction            `yaml:"max_error_rate"`
	SLO          sloYAML              `yaml:"slo"`
	Better       map[string]direction `yaml:"better"`
}

type fileYAML struct {
	layer     `yaml:",inline"`
	Diagnose  *diagnoseYAML  `yaml:"diagnose"`
	Parity    *parityYAML    `yaml:"parity"`
	Overrides []overrideYAML `yaml:"overrides"`
	// Rules is the old name of overrides:, refused with the new one.
	Rules any `yaml:"rules"`
}

type overrideYAML struct {
	Match *Selector `yaml:"match"`
	layer `yaml:",inline"`
}

type override struct {
	Selector
	layer
}

type gateYAML struct {
	Alpha      *probability `yaml:"alpha"`
	MinEffect  *Fraction    `yaml:"min_effect"`
	MinSamples *count       `yaml:"min_samples"`
	Confidence *probability `yaml:"confidence"`
	// ProfileMinEffect: profile_min_effect (Gate.ProfileMinEffect).
	ProfileMinEffect *Fraction `yaml:"profile_min_effect"`
	// RequireNoChange: require_no_change (Gate.RequireNoChange).
	RequireNoChange *bool `yaml:"require_no_change"`
	// StartSpread: start_spread (Gate.StartSpread).
	StartSpread *Fraction `yaml:"start_spread"`
}

type checksYAML struct {
	Strict          *bool     `yaml:"strict"`
	TTFTGapMax      *Duration `yaml:"ttft_gap_max"`
	KVPeakMax       *Fraction `yaml:"kv_peak_max"`
	PreemptionsMax  *float64  `yaml:"preemptions_max"`
	PrefixHitMin    *Fraction `yaml:"prefix_hit_min"`
	PrefixHitOffMax *Fraction `yaml:"prefix_hit_off_max"`
	RunningMinShare *Fraction `yaml:"running_min_share"`
	DrainTimeout    *Duration `yaml:"drain_timeout"`
	SimLostMax      *Fraction `yaml:"sim_lost_max"`
}

type kneeYAML struct {
	Throughput       *string   `yaml:"throughput"`
	Latency          *string   `yaml:"latency"`
	MinGain          *Fraction `yaml:"min_gain"`
	MinLatencyGrowth *Fraction `yaml:"min_latency_growth"`
	SLO              sloYAML   `yaml:"slo"`
}

type capacityYAML struct {
	GoodputMin *Fraction `yaml:"goodput_min"`
	Tolerance  *Fraction `yaml:"tolerance"`
	MaxRuns    *count    `yaml:"max_runs"`
	MaxRun     *Duration `yaml:"max_run"`
	MaxTime    *Duration `yaml:"max_time"`
}

type goodputYAML struct {
	TTFT *Duration `yaml:"ttft"`
	TPOT *Duration `yaml:"tpot"`
	E2EL *Duration `yaml:"e2el"`
}

// sloYAML maps a unit to its limit; values are read in the unit's kind.
type sloYAML map[string]Limit

// UnmarshalYAML reads `unit: {max: V, min: V}`.
func (m *sloYAML) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return strictyaml.Errorf(n, "slo: want a mapping of metric unit to {max: ..., min: ...}, e.g. %s: {max: 200ms}", units.TTFTP99)
	}
	out := sloYAML{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if _, dup := out[k.Value]; dup {
			return strictyaml.Errorf(k, "slo: %s is set twice: keep one", k.Value)
		}
		if v.Kind != yaml.MappingNode || len(v.Content) == 0 {
			return strictyaml.Errorf(v, "slo: %s: want {max: ...} and/or {min: ...}", k.Value)
		}
		var lim Limit
		for j := 0; j+1 < len(v.Content); j += 2 {
			bk, bv := v.Content[j], v.Content[j+1]
			x, err := parseMetricValue(k.Value, bv)
			if err != nil {
				return err
			}
			switch bk.Value {
			case "max":
				lim.Max = &x
			case "min":
				lim.Min = &x
			default:
				return strictyaml.Errorf(bk, "slo: %s: unknown bound %q: use max or min", k.Value, bk.Value)
			}
		}
		if lim.Max != nil && lim.Min != nil && *lim.Min > *lim.Max {
			return strictyaml.Errorf(v, "slo: %s: min %s is above max %s", k.Value, units.FormatValue(k.Value, *lim.Min), units.FormatValue(k.Value, *lim.Max))
		}
		out[k.Value] = lim
	}
	*m = out
	return nil
}

func (l *layer) applyRun(sc *Scope) {
	if c := l.Checks; c != nil {
		setIf(&sc.Checks.Strict, c.Strict)
		setDur(&sc.Checks.TTFTGapMax, c.TTFTGapMax)
		setFrac(&sc.Checks.KVPeakMax, c.KVPeakMax)
		setIf(&sc.Checks.PreemptionsMax, c.PreemptionsMax)
		setFrac(&sc.Checks.PrefixHitMin, c.PrefixHitMin)
		setFrac(&sc.Checks.PrefixHitOffMax, c.PrefixHitOffMax)
		setFrac(&sc.Checks.RunningMinShare, c.RunningMinShare)
		setDur(&sc.Checks.DrainTimeout, c.DrainTimeout)
		setFrac(&sc.Checks.SimLostMax, c.SimLostMax)
	}
	if k := l.Knee; k != nil {
		setIf(&sc.Knee.Throughput, k.Throughput)
		setIf(&sc.Knee.Latency, k.Latency)
		setFrac(&sc.Knee.MinGain, k.MinGain)
		setFrac(&sc.Knee.MinLatencyGrowth, k.MinLatencyGrowth)
		for unit, lim := range k.SLO {
			if sc.Knee.SLO == nil {
				sc.Knee.SLO = map[string]Limit{}
			}
			sc.Knee.SLO[unit] = mergeLimit(sc.Knee.SLO[unit], lim)
		}
	}
	if c := l.Capacity; c != nil {
		setFrac(&sc.Capacity.GoodputMin, c.GoodputMin)
		setFrac(&sc.Capacity.Tolerance, c.Tolerance)
		if c.MaxRuns != nil {
			sc.Capacity.MaxRuns = int(*c.MaxRuns)
		}
		setDur(&sc.Capacity.MaxRun, c.MaxRun)
		setDur(&sc.Capacity.MaxTime, c.MaxTime)
	}
	if g := l.Goodput; g != nil {
		setDur(&sc.Goodput.TTFT, g.TTFT)
		setDur(&sc.Goodput.TPOT, g.TPOT)
		setDur(&sc.Goodput.E2EL, g.E2EL)
	}
	setFrac(&sc.MaxErrorRate, l.MaxErrorRate)
}

func (l *layer) applyGate(g *Gate) {
	if y := l.Gate; y != nil {
		if y.Alpha != nil {
			g.Alpha = float64(*y.Alpha)
		}
		setFrac(&g.MinEffect, y.MinEffect)
		if y.MinSamples != nil {
			g.MinSamples = int(*y.MinSamples)
		}
		if y.Confidence != nil {
			g.Confidence = float64(*y.Confidence)
		}
		setFrac(&g.ProfileMinEffect, y.ProfileMinEffect)
		setIf(&g.RequireNoChange, y.RequireNoChange)
		setFrac(&g.StartSpread, y.StartSpread)
	}
}

func setIf[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

func setDur(dst *time.Duration, src *Duration) {
	if src != nil {
		*dst = src.D()
	}
}

func setFrac(dst *float64, src *Fraction) {
	if src != nil {
		*dst = float64(*src)
	}
}

// keyNode is the node of key itself in the mapping n (not its value), for
// errors about the key; an empty node when it is absent.
func keyNode(n *yaml.Node, key string) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return &yaml.Node{}
}
