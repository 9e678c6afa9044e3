package twophases

import (
	"testing"

	"github.com/vllmperf/vllmperf/internal/testphase"
)

func TestBoth(t *testing.T) {
	testphase.Alone(t)
	testphase.Timed(t)
}

func TestFaultTwice(t *testing.T) {
	testphase.Fault(t)
	testphase.Fault(t)
}
