package nested

import (
	"testing"

	"github.com/vllmperf/vllmperf/internal/testphase"
)

func helper(t *testing.T) { testphase.Alone(t) }
