package main

import "github.com/vllmperf/vllmperf/internal/outfile"

// outputs are the run's files.
type outputs struct {
	json, samples *outfile.File
}

// openOutputs checks and opens --json and --samples before the run: a
// path that cannot be written, or both flags naming one file, is a usage
// error. On error nothing is left behind.
func openOutputs(jsonPath, samplesPath string) (*outputs, error) {
	if jsonPath != "" && samplesPath != "" && outfile.SamePath(jsonPath, samplesPath) {
		return nil, usagef("--json and --samples both name %s: the second would overwrite the first; give each its own file", samplesPath)
	}
	j, err := outfile.Open("--json", jsonPath)
	if err != nil {
		return nil, usageError{err}
	}
	s, err := outfile.Open("--samples", samplesPath)
	if err != nil {
		j.Discard()
		return nil, usageError{err}
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
