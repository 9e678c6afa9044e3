package lanes

import (
	"testing"

	"github.com/vllmperf/vllmperf/internal/testphase"
)

func TestLaneTwice(t *testing.T) {
	testphase.Alone(t)
	testphase.Lane(t, testphase.LaneSuite)
	testphase.Lane(t, testphase.LaneContainers)
}

func TestLaneNotAlone(t *testing.T) {
	testphase.Timed(t)
	testphase.Lane(t, testphase.LaneContainers)
}

func TestLaneLiteral(t *testing.T) {
	testphase.Alone(t)
	testphase.Lane(t, "containers")
}
