package b

import (
	"testing"

	"github.com/vllmperf/vllmperf/internal/testphase"
)

func TestShared(t *testing.T) {}

func TestOther(t *testing.T) {
	testphase.Alone(t)
}
