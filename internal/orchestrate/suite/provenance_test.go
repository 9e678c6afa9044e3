package suite_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/server"
)

// TestConfigLinesCarryProvenance: a session's configuration lines (what
// bench.txt prints before its results) name the image's digest, the
// driver and CUDA, the host CPU and the server's VLLM_*/OMP_*
// environment, a secret's value masked.
func TestConfigLinesCarryProvenance(t *testing.T) {
	t.Setenv("OMP_NUM_THREADS", "3")
	t.Setenv("VLLM_TEST_API_KEY", "sk-must-not-show")
	s, err := suite.New(suite.Config{Server: []server.Option{server.WithBackend(server.KindSim)}, Size: scenario.Quick})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ss, err := s.Start(ctx, "basic")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := ss.Close(context.WithoutCancel(ctx)); err != nil {
			t.Error(err)
		}
	}()
	got := map[string]string{}
	for _, kv := range ss.ConfigLines {
		got[kv[0]] = kv[1]
	}
	want := map[string]string{
		suite.KeyImageDigest: server.NoDigest, // the in-process simulator runs no image
		suite.KeyDriver:      "none (simulator)",
		suite.KeyCUDA:        "none (simulator)",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if cpu := got[suite.KeyHostCPU]; cpu == "" || (runtime.GOOS == "linux" && strings.Contains(cpu, "model unknown")) {
		t.Errorf("host-cpu = %q, want the CPU's model", cpu)
	}
	env := got[suite.KeyServerEnv]
	if !strings.Contains(env, "OMP_NUM_THREADS=3") || !strings.Contains(env, "VLLM_TEST_API_KEY=[REDACTED]") || strings.Contains(env, "sk-must-not-show") {
		t.Errorf("server-env = %q, want OMP_NUM_THREADS=3 and the key masked", env)
	}
}

// TestEveryStartNamesItself: a session's configuration lines end with its
// server-start line, and two starts of one profile carry different ids
// (the gate counts a side's starts by them).
func TestEveryStartNamesItself(t *testing.T) {
	s, err := suite.New(suite.Config{Server: []server.Option{server.WithBackend(server.KindSim)}, Size: scenario.Quick})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var ids []string
	for range 2 {
		ss, err := s.Start(ctx, "basic")
		if err != nil {
			t.Fatal(err)
		}
		if err := ss.Close(context.WithoutCancel(ctx)); err != nil {
			t.Error(err)
		}
		last := ss.ConfigLines[len(ss.ConfigLines)-1]
		if lines := ss.StartLines(); len(lines) != 1 || last != lines[0] || last[0] != input.ServerStartKey || len(ss.StartID) != 16 {
			t.Errorf("last configuration line %q, start lines %q: want one, %s: <16 hex digits>", last, lines, input.ServerStartKey)
		}
		ids = append(ids, ss.StartID)
	}
	if ids[0] == ids[1] {
		t.Errorf("two starts share the id %s", ids[0])
	}
}
