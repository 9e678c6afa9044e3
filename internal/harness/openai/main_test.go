package openai

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/vllmperf/vllmperf/internal/simtest"
)

// roleHoldServer makes the test binary run the stream-holding server of
// BenchmarkStreamMemory instead of the tests (see runHoldServer).
const roleHoldServer = "openai-hold-server"

func TestMain(m *testing.M) {
	if role, _ := simtest.Role(); role == roleHoldServer {
		os.Exit(runHoldServer())
	}
	goleak.VerifyTestMain(m)
}
