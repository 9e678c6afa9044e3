package thresholds

import (
	"math"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/vllmperf/vllmperf/internal/strictyaml"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// Duration is a YAML duration written the Go way: 200ms, 1.5s, 2m.
type Duration time.Duration

// UnmarshalYAML reads a Go duration string; a bare number is refused
// because its unit would be a guess.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := parseDuration(n)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func parseDuration(n *yaml.Node) (time.Duration, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, strictyaml.Errorf(n, "want a duration such as 200ms or 1.5s")
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return 0, strictyaml.Errorf(n, "%q is not a duration: write it with a unit, such as 200ms, 1.5s or 2m", n.Value)
	}
	if v < 0 {
		return 0, strictyaml.Errorf(n, "%q: a duration here cannot be negative", n.Value)
	}
	return v, nil
}

// Fraction is a share written as a percentage in YAML ("5%", "0.5%",
// "100%") and held as a fraction (0.05).
type Fraction float64

// UnmarshalYAML reads "N%" with 0 ≤ N ≤ 100.
func (f *Fraction) UnmarshalYAML(n *yaml.Node) error {
	v, err := parsePercent(n)
	if err != nil {
		return err
	}
	*f = Fraction(v / 100)
	return nil
}

// parsePercent reads "N%" in percent points (units.ParseShare, which
// refuses a bare number here).
func parsePercent(n *yaml.Node) (float64, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, strictyaml.Errorf(n, "%q: write a percentage with a %% sign, such as 5%%", n.Value)
	}
	sh, err := units.ParseShare(n.Value, false)
	if err != nil {
		return 0, strictyaml.Errorf(n, "%s", err.Error())
	}
	return sh.Points(), nil
}

// direction is a units.Direction read from YAML.
type direction units.Direction

// UnmarshalYAML reads lower, higher or none.
func (d *direction) UnmarshalYAML(n *yaml.Node) error {
	v, err := units.ParseDirection(n.Value)
	if err != nil || n.Kind != yaml.ScalarNode {
		return strictyaml.Errorf(n, "better: %q: want lower, higher or none (shown, not gated)", n.Value)
	}
	*d = direction(v)
	return nil
}

// parseMetricValue reads a limit for unit: a duration for -ns units, a
// percentage for -% units, a number otherwise. The result is in the
// unit's own scale (nanoseconds, percent points, the number).
func parseMetricValue(unit string, n *yaml.Node) (float64, error) {
	switch units.KindOf(unit) {
	case units.KindNanoseconds:
		d, err := parseDuration(n)
		return float64(d), err
	case units.KindPercent:
		return parsePercent(n)
	default:
		v, err := strconv.ParseFloat(n.Value, 64)
		if n.Kind != yaml.ScalarNode || err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, strictyaml.Errorf(n, "%s: %q is not a number", unit, n.Value)
		}
		return v, nil
	}
}

// probability is a number strictly between 0 and 1 (alpha, confidence).
type probability float64

// UnmarshalYAML reads a number in (0, 1).
func (p *probability) UnmarshalYAML(n *yaml.Node) error {
	v, err := strconv.ParseFloat(n.Value, 64)
	if n.Kind != yaml.ScalarNode || err != nil || !(v > 0 && v < 1) {
		return strictyaml.Errorf(n, "%q: want a number between 0 and 1, such as 0.05", n.Value)
	}
	*p = probability(v)
	return nil
}

// count is a whole number of runs, at least 2.
type count int

// UnmarshalYAML reads a whole number ≥ 2.
func (c *count) UnmarshalYAML(n *yaml.Node) error {
	v, err := strconv.Atoi(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil || v < 2 {
		return strictyaml.Errorf(n, "%q: want a whole number of runs, at least 2", n.Value)
	}
	*c = count(v)
	return nil
}
