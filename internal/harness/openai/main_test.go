package openai

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// holdServerEnv makes the test binary run the stream-holding server of
// BenchmarkStreamMemory instead of the tests (see runHoldServer).
const holdServerEnv = "VLLMPERF_OPENAI_HOLD_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(holdServerEnv) == "1" {
		os.Exit(runHoldServer())
	}
	goleak.VerifyTestMain(m)
}
