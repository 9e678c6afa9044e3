package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// usageCase is one way of calling a command wrongly.
type usageCase struct {
	name string
	args []string
	want string // in the error
}

// usageCases lists, for every command of the tree, the wrong calls that
// its checks refuse before it runs: an unknown flag (every command), a
// stray or unknown command word and a missing argument (where the
// command's argument check refuses them), and a missing command (a
// command that only groups others).
func usageCases(t *testing.T) []usageCase {
	t.Helper()
	root := newRootCommand(&bytes.Buffer{}, &bytes.Buffer{})
	var cases []usageCase
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		join := func(more ...string) []string { return append(append([]string(nil), path...), more...) }
		cases = append(cases, usageCase{strings.Join(join("--no-such-flag"), " "), join("--no-such-flag"), "unknown flag: --no-such-flag"})
		if c.Args != nil && c.Args(c, []string{"nosuchcommand"}) != nil {
			cases = append(cases, usageCase{strings.Join(join("nosuchcommand"), " "), join("nosuchcommand"), "nosuchcommand"})
		}
		if c.Args != nil && c.Args(c, nil) != nil {
			cases = append(cases, usageCase{strings.Join(path, " ") + " (no argument)", path, "--help"})
		}
		if c.HasSubCommands() {
			cases = append(cases, usageCase{strings.Join(path, " ") + " (no command)", path, "needs a command"})
		}
		for _, sub := range c.Commands() {
			walk(sub, join(sub.Name()))
		}
	}
	walk(root, nil)
	return cases
}

// TestUsageErrorsExit2 calls every command of the tree with a usage error
// and an unknown command: each must exit 2 (exitstatus.BadUsage), never
// the regression status 1, and say where its help is.
func TestUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	cases := usageCases(t)
	if len(cases) < 40 { // 25 commands at least: a walk that found fewer lost some
		t.Fatalf("the walk found %d wrong calls, want at least 40: %v", len(cases), cases)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			err := run(t.Context(), &out, &errOut, tc.args)
			var msg bytes.Buffer
			if got := exitstatus.Code(err, &msg); got != exitstatus.BadUsage {
				t.Fatalf("vllmperf %v: exit %d, want %d; stderr: %s", tc.args, got, exitstatus.BadUsage, msg.String())
			}
			if !strings.Contains(msg.String(), tc.want) || !strings.Contains(msg.String(), "--help") {
				t.Errorf("vllmperf %v: %q, want it to contain %q and point to --help", tc.args, msg.String(), tc.want)
			}
		})
	}
}

// TestUsageSuggests checks the "did you mean" of a mistyped flag and
// command, and that a help topic that names no command is refused.
func TestUsageSuggests(t *testing.T) {
	t.Parallel()
	for _, tc := range []usageCase{
		{"flag typo", []string{"run", "--concurency", "3"}, "did you mean --concurrency?"},
		{"gate flag typo", []string{"gate", "--baselin", "x"}, "did you mean --baseline?"},
		{"command typo", []string{"hisory"}, `did you mean "history"?`},
		{"subcommand typo", []string{"history", "chek"}, `did you mean "check"?`},
		{"help topic", []string{"help", "nosuch"}, `unknown help topic "nosuch"`},
		{"gate's extra positional", []string{"gate", "a", "b", "c"}, `"c"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut, msg bytes.Buffer
			err := run(t.Context(), &out, &errOut, tc.args)
			if got := exitstatus.Code(err, &msg); got != exitstatus.BadUsage || !strings.Contains(msg.String(), tc.want) {
				t.Errorf("vllmperf %v: exit %d, %q; want exit 2 and %q", tc.args, got, msg.String(), tc.want)
			}
		})
	}
}

// TestVersion checks `vllmperf --version`: exit 0, the module's version,
// the commit (or why none is known) and the Go version on stdout.
func TestVersion(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	if err := run(t.Context(), &out, &errOut, []string{"--version"}); err != nil {
		t.Fatalf("vllmperf --version: %v", err)
	}
	if got := out.String(); !strings.HasPrefix(got, "vllmperf version ") || !strings.Contains(got, "commit ") || !strings.Contains(got, ", go1.") {
		t.Errorf("vllmperf --version printed %q, want \"vllmperf version V, commit C, goX\"", got)
	}
}
