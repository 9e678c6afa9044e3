package cliflags

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// NoArgs refuses positional arguments as a usage error (exit 2), with the
// flag the argument probably belongs to: a command's cobra.PositionalArgs.
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	hint := fmt.Sprintf("see '%s --help'", cmd.CommandPath())
	if strings.Contains(args[0], ":") {
		hint = "a server's URL goes after --target"
	}
	return exitstatus.Usagef("unexpected argument %q: %s takes flags only (%s)", args[0], cmd.CommandPath(), hint)
}
