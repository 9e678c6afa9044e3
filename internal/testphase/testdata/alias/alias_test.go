package alias

import (
	"testing"

	tp "github.com/vllmperf/vllmperf/internal/testphase"
)

func TestAliased(t *testing.T) {
	tp.Alone(t)
}
