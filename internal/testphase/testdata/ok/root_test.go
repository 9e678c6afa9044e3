package root

import (
	"testing"

	"github.com/vllmperf/vllmperf/internal/testphase"
)

func TestServerAlone(t *testing.T) {
	testphase.Alone(t)
	testphase.Fault(t)
}

func TestPlain(t *testing.T) {}

func TestTimingQuick(tt *testing.T) {
	tt.Parallel()
	testphase.Timed(tt)
}

func TestMain(m *testing.M) {}

func Testlower(t *testing.T) {}

func helper() {}

func TestContainersAlone(t *testing.T) {
	testphase.Alone(t)
	testphase.Lane(t, testphase.LaneContainers)
}
