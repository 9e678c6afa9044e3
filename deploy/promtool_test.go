package deploy_test

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

const installPrometheus = "install Debian's prometheus package (apt-get install prometheus), as .ci/run does"

// promtool runs promtool with args and fails the test with its output
// unless it exits 0.
func promtool(t *testing.T, args ...string) {
	t.Helper()
	bin := requireTool(t, "promtool", installPrometheus)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %v: %v\n%s", args, err, out)
	}
	t.Logf("promtool %v:\n%s", args, out)
}

// TestPromtoolCheckConfig: the scrape config, and the rule files it names.
func TestPromtoolCheckConfig(t *testing.T) {
	t.Parallel()
	promtool(t, "check", "config", promConfigPath)
}

// TestPromtoolCheckRules: every rule file, with promtool's linting.
func TestPromtoolCheckRules(t *testing.T) {
	t.Parallel()
	promtool(t, append([]string{"check", "rules"}, glob(t, rulesGlob)...)...)
}

// TestPromtoolTestRules runs the rule unit tests of prometheus/tests.
func TestPromtoolTestRules(t *testing.T) {
	t.Parallel()
	promtool(t, append([]string{"test", "rules"}, glob(t, promtoolTests)...)...)
}
