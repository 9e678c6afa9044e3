package main

import (
	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/internal/exitstatus"
	"github.com/vllmperf/vllmperf/internal/outfile"
)

// outputFlags name the run's files.
type outputFlags struct{ json, samples string }

func (o *outputFlags) register(f *pflag.FlagSet) {
	f.StringVar(&o.json, "json", "", "write the summary as vLLM --save-result JSON to this file")
	f.StringVar(&o.samples, "samples", "", "write every request's record as JSON lines to this file")
}

// outputs are the run's files.
type outputs struct{ json, samples *outfile.File }

// open checks and opens --json and --samples before the run: a path that
// cannot be written, or both flags naming one file, is a usage error. On
// error nothing is left behind.
func (o *outputFlags) open() (*outputs, error) {
	if o.json != "" && o.samples != "" && outfile.SamePath(o.json, o.samples) {
		return nil, usagef("--json and --samples both name %s: the second would overwrite the first; give each its own file", o.samples)
	}
	j, err := outfile.Open("--json", o.json)
	if err != nil {
		return nil, exitstatus.Usage(err)
	}
	s, err := outfile.Open("--samples", o.samples)
	if err != nil {
		j.Discard()
		return nil, exitstatus.Usage(err)
	}
	return &outputs{json: j, samples: s}, nil
}

// paths lists the outputs' paths, for messages.
func (o *outputs) paths() []string {
	var out []string
	for _, f := range []*outfile.File{o.json, o.samples} {
		if p := f.Path(); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// discard removes every output not written.
func (o *outputs) discard() {
	o.json.Discard()
	o.samples.Discard()
}
