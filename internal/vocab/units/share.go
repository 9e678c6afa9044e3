package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Share is a share of requests (the error rate's limit: --max-error-rate,
// thresholds.yaml's max_error_rate) as it was written: a percentage ("5%")
// or a bare fraction ("0.05"). ParseShare is its one parser.
type Share struct {
	// Value is the number written: percent points when Percent, else a
	// fraction.
	Value   float64
	Percent bool
}

// Fraction is the share from 0 to 1.
func (s Share) Fraction() float64 {
	if s.Percent {
		return s.Value / 100
	}
	return s.Value
}

// Points is the share in percent points, from 0 to 100.
func (s Share) Points() float64 {
	if s.Percent {
		return s.Value
	}
	return s.Value * 100
}

// ParseShare reads a share: a percentage from 0% to 100% ("5%", "0.5%"),
// or, when bare is true, also a fraction from 0 to 1 ("0.05"). Where bare
// is false (YAML files) a number without % is refused as ambiguous. The
// error quotes v and says what to write; callers prefix where v came from.
func ParseShare(v string, bare bool) (Share, error) {
	s := strings.TrimSpace(v)
	num, pct := strings.CutSuffix(s, "%")
	if !pct && !bare {
		return Share{}, fmt.Errorf("%q: write a percentage with a %% sign, such as 5%% (a bare number would be ambiguous between 0.05 and 5%%)", v)
	}
	r, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	limit := 1.0
	if pct {
		limit = 100
	}
	if err != nil || math.IsNaN(r) || r < 0 || r > limit {
		if bare {
			return Share{}, fmt.Errorf("%q: want a fraction from 0 to 1 (0.05) or a percentage from 0%% to 100%% (5%%)", v)
		}
		return Share{}, fmt.Errorf("%q: want a percentage between 0%% and 100%%", v)
	}
	return Share{Value: r, Percent: pct}, nil
}
