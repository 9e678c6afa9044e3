package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// output is one file a run writes (--json, --samples). It is checked and
// opened before any load is sent, so that a path that cannot be written
// fails the run before it costs anything, and written when the run is
// done. A regular file is written to a temporary file beside it and
// renamed onto it at the end: a run that fails never leaves it empty or
// half written. A path that exists and is not a regular file (a FIFO,
// /dev/stdout, a process substitution) is opened as it is and written in
// place.
type output struct {
	flag string // "--json": errors name the flag the path came from
	path string
	// file is the open temporary file (inPlace false) or the path itself.
	file    *os.File
	target  string      // where the temporary file is renamed to
	mode    fs.FileMode // the mode the written file gets
	inPlace bool
	done    bool
}

// openOutput checks that path can be written and opens what will hold it;
// an empty path is no output (nil). Its errors are usage errors that name
// the flag.
func openOutput(flag, path string) (*output, error) {
	if path == "" {
		return nil, nil
	}
	o := &output{flag: flag, path: path, target: path, mode: 0o644}
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return nil, usagef("%s %s: that is a directory; give a file name, e.g. %s", flag, path, filepath.Join(path, defaultName(flag)))
	case err == nil && !fi.Mode().IsRegular():
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, usagef("%s %s: cannot write to it: %v", flag, path, unwrapPath(err))
		}
		o.file, o.inPlace = f, true
		return o, nil
	case err == nil:
		// Rename onto the file a symbolic link points to, not the link.
		if o.target, err = filepath.EvalSymlinks(path); err != nil {
			return nil, usagef("%s %s: %v", flag, path, unwrapPath(err))
		}
		o.mode = fi.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return nil, usagef("%s %s: %v", flag, path, unwrapPath(err))
	}
	dir := filepath.Dir(o.target)
	if di, err := os.Stat(dir); err != nil || !di.IsDir() {
		return nil, usagef("%s %s: the directory %s does not exist; create it first (mkdir -p %s) or choose another path", flag, path, dir, dir)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(o.target)+".*.tmp")
	if err != nil {
		return nil, usagef("%s %s: cannot write in %s: %v", flag, path, dir, unwrapPath(err))
	}
	o.file = f
	return o, nil
}

// defaultName is a file name to suggest for flag.
func defaultName(flag string) string {
	if flag == "--samples" {
		return "samples.jsonl"
	}
	return "result.json"
}

// unwrapPath drops the *PathError's own "op path:" prefix: the message
// names the path already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// write writes the output with fn and puts it in place. Its error names
// the flag and the path.
func (o *output) write(fn func(io.Writer) error) error {
	if o == nil || o.done {
		return nil
	}
	o.done = true
	bw := bufio.NewWriter(o.file)
	err := fn(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := o.file.Close(); err == nil {
		err = cerr
	}
	if o.inPlace {
		if err != nil {
			return fmt.Errorf("%s %s: %w", o.flag, o.path, err)
		}
		return nil
	}
	if err == nil {
		err = os.Chmod(o.file.Name(), o.mode)
	}
	if err == nil {
		err = os.Rename(o.file.Name(), o.target)
	}
	if err != nil {
		_ = os.Remove(o.file.Name())
		return fmt.Errorf("%s %s: %w", o.flag, o.path, err)
	}
	return nil
}

// discard removes an output that was never written (the run failed
// before its end). It is safe to call after write.
func (o *output) discard() {
	if o == nil || o.done {
		return
	}
	o.done = true
	_ = o.file.Close()
	if !o.inPlace {
		_ = os.Remove(o.file.Name())
	}
}

// outputs are the run's files.
type outputs struct {
	json, samples *output
}

// openOutputs checks and opens --json and --samples before the run: a
// path that cannot be written, or both flags naming one file, is a usage
// error. On error nothing is left behind.
func openOutputs(jsonPath, samplesPath string) (*outputs, error) {
	if jsonPath != "" && samplesPath != "" && samePath(jsonPath, samplesPath) {
		return nil, usagef("--json and --samples both name %s: the second would overwrite the first; give each its own file", samplesPath)
	}
	j, err := openOutput("--json", jsonPath)
	if err != nil {
		return nil, err
	}
	s, err := openOutput("--samples", samplesPath)
	if err != nil {
		j.discard()
		return nil, err
	}
	return &outputs{json: j, samples: s}, nil
}

// samePath reports whether a and b name one file: the same path once
// cleaned, or the same existing file through links.
func samePath(a, b string) bool {
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	if errA == nil && errB == nil && absA == absB {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// paths lists the outputs' paths, for messages.
func (o *outputs) paths() []string {
	var out []string
	for _, f := range []*output{o.json, o.samples} {
		if f != nil {
			out = append(out, f.path)
		}
	}
	return out
}

// discard removes every output not written.
func (o *outputs) discard() {
	o.json.discard()
	o.samples.discard()
}
