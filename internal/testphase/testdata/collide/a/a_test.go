package a

import (
	"testing"

	"github.com/vllmperf/vllmperf/internal/testphase"
)

func TestShared(t *testing.T) {
	testphase.Alone(t)
}
