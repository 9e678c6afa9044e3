package cliflags

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/internal/suggest"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// EnforceUsage makes every command of the tree under root keep the exit
// contract for how it is called: a wrong positional argument, an unknown
// subcommand, a missing subcommand or a bad flag is a usage error (exit
// 2), never the regression status 1 that cobra's plain errors would get.
// A mistyped flag or subcommand gets a "did you mean".
func EnforceUsage(root *cobra.Command) {
	root.SetFlagErrorFunc(flagError)
	root.InitDefaultHelpCmd()       // cobra adds these two when it runs; add them
	root.InitDefaultCompletionCmd() // now, so that the walk covers them
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		switch {
		case c.HasSubCommands() && !c.Runnable():
			c.Args = cobra.ArbitraryArgs
			c.RunE = subcommandNeeded
		case c.Args != nil:
			c.Args = usageArgs(c.Args)
		case c.Name() == "help" && c.Parent() == root:
			c.Args = helpTopic
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// usageArgs marks the errors of a command's argument check as usage
// errors, with where to read the command's usage when they do not say.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		err := check(c, args)
		switch {
		case err == nil:
			return nil
		case strings.Contains(err.Error(), "--help"):
			return exitstatus.Usage(err)
		}
		return exitstatus.Usagef("%v (see '%s --help')", err, c.CommandPath())
	}
}

// helpTopic refuses `help X` for an X that names no command.
func helpTopic(c *cobra.Command, args []string) error {
	found, rest, err := c.Root().Find(args)
	if err != nil {
		return exitstatus.Usage(err)
	}
	if len(rest) > 0 {
		return exitstatus.Usagef("unknown help topic %q: %s has no command %q (see '%s --help')", strings.Join(args, " "), found.CommandPath(), args[len(args)-len(rest)], found.CommandPath())
	}
	return nil
}

// subcommandNeeded is the RunE of a command that only groups others: an
// argument that names none of them is an unknown command, and no
// argument at all is a missing one.
func subcommandNeeded(c *cobra.Command, args []string) error {
	names := subcommandNames(c)
	if len(args) == 0 {
		return exitstatus.Usagef("%s needs a command: %s (see '%s --help')", c.CommandPath(), strings.Join(names, ", "), c.CommandPath())
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
	if near := suggest.Closest(args[0], names); near != "" {
		msg += fmt.Sprintf(": did you mean %q?", near)
	}
	return exitstatus.Usagef("%s (the commands: %s; see '%s --help')", msg, strings.Join(names, ", "), c.CommandPath())
}

// subcommandNames lists the names of c's visible subcommands.
func subcommandNames(c *cobra.Command) []string {
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	return names
}

// flagError is every command's answer to a flag it cannot parse: a usage
// error, with the nearest flag the command has when the name is unknown.
func flagError(c *cobra.Command, err error) error {
	var missing *pflag.NotExistError
	if errors.As(err, &missing) {
		if near := closestFlag(c, missing.GetSpecifiedName()); near != "" {
			return exitstatus.Usagef("%v: did you mean --%s? (see '%s --help')", err, near, c.CommandPath())
		}
	}
	return exitstatus.Usage(fmt.Errorf("%w (see '%s --help')", err, c.CommandPath()))
}

// closestFlag is the flag of c nearest to a mistyped long name, or "".
func closestFlag(c *cobra.Command, name string) string {
	if len(name) < 2 { // a shorthand: too short to guess from
		return ""
	}
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	return suggest.Closest(name, names)
}
