package cliflags

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// ErrorRateFlag limits the share of a run's failed requests;
// OldErrorRateFlag is its deprecated name, still accepted with a notice.
const (
	ErrorRateFlag    = "--max-error-rate"
	OldErrorRateFlag = "--max-failure-rate"
)

// ErrorRate binds --max-error-rate and its deprecated name to v (default
// "0": no failed request allowed). pflag prints the deprecation notice to
// the set's output, which cobra would copy to stdout (the summary's
// stream): it goes to the set's output given here instead.
func ErrorRate(f *pflag.FlagSet, v *string) {
	f.StringVar(v, ErrorRateFlag[2:], "0", "fail the run (exit 1) when a larger share of the measured requests fails: a fraction (0.05) or a percentage (5%)")
	f.StringVar(v, OldErrorRateFlag[2:], "0", "the deprecated name of "+ErrorRateFlag)
	_ = f.MarkDeprecated(OldErrorRateFlag[2:], "use "+ErrorRateFlag+" (the same share, renamed)")
}

// ParseErrorRate reads the error-rate limit v as a fraction
// (units.ParseShare), the error naming the flag as the user wrote it.
func ParseErrorRate(flags *pflag.FlagSet, v string) (float64, error) {
	name := ErrorRateFlag
	if flags.Changed(OldErrorRateFlag[2:]) {
		if flags.Changed(ErrorRateFlag[2:]) {
			return 0, fmt.Errorf("%s and %s set the same limit: give only %s", OldErrorRateFlag, ErrorRateFlag, ErrorRateFlag)
		}
		name = OldErrorRateFlag
	}
	sh, err := units.ParseShare(v, true)
	if err != nil {
		return 0, fmt.Errorf("%s %w", name, err)
	}
	return sh.Fraction(), nil
}
