package verdict

// Outcome is a gate command's overall result: the gate's, history
// check's, upgrade-gate's, bisect's.
type Outcome string

// The outcomes, with their exit codes.
const (
	OutcomePass         = Outcome(Pass)         // exit 0
	OutcomeFail         = Outcome(Fail)         // exit 1: a regression, a breached limit, a missing metric
	OutcomeInconclusive = Outcome(Inconclusive) // exit 3: nothing failed, something could not be decided
	OutcomeInvalid      = Outcome(Invalid)      // exit 2: a run was not a sound measurement (GPU throttled or shared)
)

// ExitCode is the process exit status of an outcome: 0 pass, 1 fail,
// 2 invalid (the results are not comparable: bad input, which never
// produces a report, or an INVALID run), 3 inconclusive.
func (o Outcome) ExitCode() int {
	switch o {
	case OutcomeFail:
		return 1
	case OutcomeInconclusive:
		return 3
	case OutcomeInvalid:
		return 2
	default:
		return 0
	}
}
