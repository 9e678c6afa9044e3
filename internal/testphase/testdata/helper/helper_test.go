package helper

import (
	"testing"

	"github.com/vllmperf/vllmperf/internal/testphase"
)

func startServer(t *testing.T) {
	testphase.Alone(t)
}

func TestSubtest(t *testing.T) {
	t.Run("x", func(t *testing.T) {
		testphase.Timed(t)
	})
}
