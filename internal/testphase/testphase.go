// Package testphase lets a test declare, in its own body, the phase of
// make test it runs in, and lists those declarations for make.
//
// make test runs the tests in phases, one go test each, with the phase in
// the environment variable VLLMPERF_TEST_PHASE:
//
//   - race: every package under the race detector, two at a time. A test
//     that declares no phase runs here.
//   - timed (Timed): millisecond-accurate real-time asserts; they run after
//     the race phase, one package at a time, with nothing else on the machine.
//   - alone (Alone): tests that must not share the machine with the race
//     phase's tests: go test or make subprocesses, real-time servers,
//     containers; they run last.
//   - measured (Measured): long computations (measurements, replays) that
//     would take minutes under -race; they run without it, beside the race
//     phase, at a lower priority.
//
// The alone phase runs in lanes (Lane): each lane is one go test of its own,
// and make runs the lanes at the same time. A lane's tests still run one
// after another (or as t.Parallel says), as go test runs them.
//
// Fault marks a case of docs/reliability.md's fault matrix (make
// fault-cases counts them); it is not a phase of its own, and a fault test
// may also declare one of the three.
//
// A declaration is the first statements of a Test function:
//
//	func TestX(t *testing.T) {
//		testphase.Alone(t)
//		...
//
// Where VLLMPERF_TEST_PHASE names another phase the test skips itself with a
// one-line reason; where it is unset (a plain go test) every test runs, as
// without this package. List (and go run ./internal/testphase/cmd/testphase)
// reads the declarations from the source with go/ast, so that make runs a
// phase only in the packages, and only the tests, that declare it.
package testphase

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// EnvPhase is the environment variable that names the phase make test is running.
const EnvPhase = "VLLMPERF_TEST_PHASE"

// Phase is a phase of make test.
type Phase string

// The phases of make test, in the order make runs them (measured runs
// beside race).
const (
	// PhaseRace is the phase of every test that declares none: under -race.
	PhaseRace Phase = "race"
	// PhaseMeasured is for long computations kept out of -race.
	PhaseMeasured Phase = "measured"
	// PhaseTimed is for millisecond-accurate real-time asserts.
	PhaseTimed Phase = "timed"
	// PhaseAlone is for tests that must not share the machine.
	PhaseAlone Phase = "alone"
)

// Phases lists the phases of make test.
var Phases = []Phase{PhaseRace, PhaseTimed, PhaseAlone, PhaseMeasured}

// Measured declares that t runs in the measured phase.
func Measured(t testing.TB) { t.Helper(); declare(t, PhaseMeasured) }

// Timed declares that t runs in the timed phase.
func Timed(t testing.TB) { t.Helper(); declare(t, PhaseTimed) }

// Alone declares that t runs in the alone phase.
func Alone(t testing.TB) { t.Helper(); declare(t, PhaseAlone) }

// LaneName names a lane of the alone phase.
type LaneName string

// The lanes of the alone phase. Tests of different lanes run at the same
// time, so a lane is for tests that wait on something of their own (a
// server, a subprocess, a container) rather than on the CPU, and that do
// not watch what the other lanes' tests start.
const (
	// LaneDefault is the lane of an alone test that declares none.
	LaneDefault LaneName = "default"
	// LaneContainers is for the tests that start Docker containers: every
	// container start holds the devices' lease (internal/target/server),
	// so two of them would wait for each other anyway, and some watch
	// every managed container while they run.
	LaneContainers LaneName = "containers"
	// LaneSuite is for the suite's own real-time runs: TestPerf (every
	// profile, minutes, which would hold the other tests up), the suite
	// package's longer runs, and the diagnosis rules' simulator runs
	// (TestRulesFire, a minute, built to stay quiet beside 16 busy loops),
	// which fill the lane while TestPerf runs instead of following the
	// default lane's longest package.
	LaneSuite LaneName = "suite"
)

// Lanes lists the lanes of the alone phase.
var Lanes = []LaneName{LaneDefault, LaneContainers, LaneSuite}

// Lane declares the lane of an alone test (LaneDefault without it). It
// only matters to make test's schedule: the test runs as it would
// without it.
func Lane(t testing.TB, name LaneName) {
	t.Helper()
	if !slices.Contains(Lanes, name) {
		t.Fatalf("testphase.Lane(%q): not a lane of the alone phase: want one of %s", name, laneNames())
	}
}

func laneNames() string {
	names := make([]string, len(Lanes))
	for i, l := range Lanes {
		names[i] = string(l)
	}
	return strings.Join(names, ", ")
}

// Fault declares that t is a case of the fault matrix
// (docs/reliability.md). It only checks VLLMPERF_TEST_PHASE: the test runs in
// the phase it declares otherwise (race when none).
func Fault(t testing.TB) {
	t.Helper()
	if _, err := Current(); err != nil {
		t.Fatal(err)
	}
}

// declare skips t unless the phase running is p, or none is set.
func declare(t testing.TB, p Phase) {
	t.Helper()
	cur, err := Current()
	if err != nil {
		t.Fatal(err)
	}
	if reason := SkipReason(cur, p); reason != "" {
		t.Skip(reason)
	}
}

// Current returns the phase VLLMPERF_TEST_PHASE names: "" when it is unset
// (a plain go test, every test runs), an error naming the valid values when
// it names none.
func Current() (Phase, error) {
	v := strings.TrimSpace(os.Getenv(EnvPhase))
	if v == "" {
		return "", nil
	}
	p := Phase(v)
	if !slices.Contains(Phases, p) {
		return "", fmt.Errorf("%s=%q is not a phase of make test: want one of %s, or unset it to run every test", EnvPhase, v, phaseNames())
	}
	return p, nil
}

// SkipReason returns why a test declared in phase declared skips while
// phase running runs, or "" when it runs: running is "" (every test runs) or
// the declared phase.
func SkipReason(running, declared Phase) string {
	if running == "" || running == declared {
		return ""
	}
	return fmt.Sprintf("%s test: runs in make test's %s phase, not this %s phase (%s=%s)", declared, declared, running, EnvPhase, declared)
}

func phaseNames() string {
	names := make([]string, len(Phases))
	for i, p := range Phases {
		names[i] = string(p)
	}
	return strings.Join(names, ", ")
}
