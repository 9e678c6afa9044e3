package inner

import (
	"testing"

	"github.com/vllmperf/vllmperf/internal/testphase"
)

func TestFaultOnly(t *testing.T) {
	testphase.Fault(t)
}

func TestLongFit(t *testing.T) {
	testphase.Measured(t)
}
