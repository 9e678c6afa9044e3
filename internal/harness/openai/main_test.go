package openai

import (
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// holdServerEnv makes the test binary run one of the benchmarks' child
// servers instead of the tests: "1" the stream-holding server of
// BenchmarkStreamMemory (runHoldServer), "oversized:N" the endless-line
// server of BenchmarkOversizedEventMemory (runOversizedServer).
const holdServerEnv = "VLLMPERF_OPENAI_HOLD_SERVER"

func TestMain(m *testing.M) {
	switch mode := os.Getenv(holdServerEnv); {
	case mode == "1":
		os.Exit(runHoldServer())
	case strings.HasPrefix(mode, "oversized:"):
		os.Exit(runOversizedServer(strings.TrimPrefix(mode, "oversized:")))
	}
	goleak.VerifyTestMain(m)
}
