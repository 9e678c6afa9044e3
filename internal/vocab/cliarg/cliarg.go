// Package cliarg names the flags of the programs vllmperf runs: the
// simulator (vllm-sim), vLLM's server, llm-d's simulator, nvidia-smi and
// git. They are those programs' flags, not vllmperf's (whose flags live
// in cmd/vllmperf alone), so each is named once here, without its
// dashes, and spelled on a command line by Flag's methods.
// cmd/vllmperf's TestNoFlagTextInLibraries checks that no name here is
// one of vllmperf's own flags, except those All says are shared.
package cliarg

import "strings"

// Flag is another program's flag, named without its dashes: "sim-seed".
type Flag string

// Arg is the flag as given on a command line: --sim-seed.
func (f Flag) Arg() string { return "--" + string(f) }

// With is the flag and its value as two arguments: --sim-seed and 7.
func (f Flag) With(value string) []string { return []string{f.Arg(), value} }

// Eq is the flag and its value as one argument: --sim-seed=7.
func (f Flag) Eq(value string) string { return f.Arg() + "=" + value }

// Is reports whether arg gives the flag, alone or as --flag=value.
func (f Flag) Is(arg string) bool { return arg == f.Arg() || strings.HasPrefix(arg, f.Arg()+"=") }

// Value returns the flag's value in args (--flag v or --flag=v; the last
// one given wins) and whether args give it.
func (f Flag) Value(args []string) (string, bool) {
	v, found := "", false
	for i, a := range args {
		if s, ok := strings.CutPrefix(a, f.Arg()+"="); ok {
			v, found = s, true
		} else if a == f.Arg() && i+1 < len(args) {
			v, found = args[i+1], true
		}
	}
	return v, found
}

// The simulator's own flags (cmd/vllm-sim, package vllmsim).
const (
	SimSeed      Flag = "sim-seed"
	SimGPU       Flag = "sim-gpu"
	SimJitter    Flag = "sim-jitter"
	SimColdStart Flag = "sim-cold-start"
)

// vLLM's server flags (vllm serve), which the simulator takes too.
const (
	Host           Flag = "host"
	Port           Flag = "port"
	Model          Flag = "model"
	MaxModelLen    Flag = "max-model-len"
	ProfilerConfig Flag = "profiler-config"
)

// llm-d's simulator's flag that keeps it off the network (package llmd).
const ForceDummyTokenizer Flag = "force-dummy-tokenizer"

// nvidia-smi's flags.
const (
	QueryGPU         Flag = "query-gpu"
	QueryComputeApps Flag = "query-compute-apps"
	Format           Flag = "format"
)

// git's flags.
const NameOnly Flag = "name-only"

// Shared are the names here that vllmperf's own commands use too, each
// for what it means there: --model (the served model to request, as
// vLLM's benchmark client has it) and --format (a report's format).
var Shared = []Flag{Model, Format}

// All are the flags named here.
var All = []Flag{SimSeed, SimGPU, SimJitter, SimColdStart, Host, Port, Model, MaxModelLen, ProfilerConfig,
	ForceDummyTokenizer, QueryGPU, QueryComputeApps, Format, NameOnly}
