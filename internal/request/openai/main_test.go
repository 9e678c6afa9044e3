package openai

import (
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/vllmperf/vllmperf/internal/simtest"
)

// The roles this test binary plays as a benchmark's child server
// (simtest.StartChild): the stream-holding server of BenchmarkStreamMemory
// (runHoldServer) and the endless-line server of
// BenchmarkOversizedEventMemory (runOversizedServer, its line size as the
// argument).
const (
	roleHoldServer      = "openai-hold-server"
	roleOversizedServer = "openai-oversized-server"
)

func TestMain(m *testing.M) {
	switch role, args := simtest.Role(); role {
	case roleHoldServer:
		os.Exit(runHoldServer())
	case roleOversizedServer:
		os.Exit(runOversizedServer(strings.Join(args, "")))
	}
	goleak.VerifyTestMain(m)
}
