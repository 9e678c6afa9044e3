package cliflags

import (
	"github.com/spf13/cobra"

	"github.com/vllmperf/vllmperf/cmd/vllmperf/internal/gatecli"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// GateArgs takes `vllmperf gate OLD NEW` as benchstat does: two
// positional files, the baseline first, beside --baseline and --new. A
// file given both ways, or one positional file alone, is a usage error.
func GateArgs(o *gatecli.Flags) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return nil
		case len(args) > 2:
			return exitstatus.Usagef("unexpected argument %q: gate takes two files, OLD NEW (or --baseline OLD --new NEW)", args[2])
		case len(args) == 1:
			return exitstatus.Usagef("gate got one file, %q: give two, OLD NEW (the baseline first), or --baseline OLD --new NEW", args[0])
		case o.Baseline != "" || o.New != "":
			return exitstatus.Usagef("gate got files both as OLD NEW and as --baseline/--new: give them one way")
		}
		o.Baseline, o.New = args[0], args[1]
		return nil
	}
}
