// Package config is vllm-sim's configuration and command line: Options
// (the engine's engine.Config and the API server's settings, faults,
// profiler, reasoning, image limits), the flag table that writes into them
// (ParseArgs, Usage: vllm serve's flags and the simulator's --sim-*), and
// Options.Validate, so that a value is taken or refused alike from the
// command line and from Go. Errors are *ArgError in argparse's words.
package config
