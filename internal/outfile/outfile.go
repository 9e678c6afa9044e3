// Package outfile writes a command's output files safely: each is checked
// and opened before any work is done, so that a path that cannot be
// written fails early, and put in place atomically when the work is done.
package outfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// File is one file a run writes (vllmperf run --json, --samples). It is checked and
// opened before any load is sent, so that a path that cannot be written
// fails the run before it costs anything, and written when the run is
// done. A regular file is written to a temporary file beside it and
// renamed onto it at the end: a run that fails never leaves it empty or
// half written. A path that exists and is not a regular file (a FIFO,
// /dev/stdout, a process substitution) is opened as it is and written in
// place.
type File struct {
	flag string // errors name the flag the path came from: --json
	path string
	// file is the open temporary file (inPlace false) or the path itself.
	file    *os.File
	target  string      // where the temporary file is renamed to
	mode    fs.FileMode // the mode the written file gets
	inPlace bool
	done    bool
}

// Open checks that path can be written and opens what will hold it;
// an empty path is no output (nil). Its errors name the flag and are
// the caller's (a usage error for a CLI).
func Open(flag, path string) (*File, error) {
	if path == "" {
		return nil, nil
	}
	o := &File{flag: flag, path: path, target: path, mode: 0o644}
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return nil, fmt.Errorf("%s %s: that is a directory; give a file name, e.g. %s", flag, path, filepath.Join(path, defaultName(flag)))
	case err == nil && !fi.Mode().IsRegular():
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("%s %s: cannot write to it: %v", flag, path, unwrapPath(err))
		}
		o.file, o.inPlace = f, true
		return o, nil
	case err == nil:
		// Rename onto the file a symbolic link points to, not the link.
		if o.target, err = filepath.EvalSymlinks(path); err != nil {
			return nil, fmt.Errorf("%s %s: %v", flag, path, unwrapPath(err))
		}
		o.mode = fi.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s %s: %v", flag, path, unwrapPath(err))
	}
	dir := filepath.Dir(o.target)
	if di, err := os.Stat(dir); err != nil || !di.IsDir() {
		return nil, fmt.Errorf("%s %s: the directory %s does not exist; create it first (mkdir -p %s) or choose another path", flag, path, dir, dir)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(o.target)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("%s %s: cannot write in %s: %v", flag, path, dir, unwrapPath(err))
	}
	o.file = f
	return o, nil
}

// defaultName is a file name to suggest for flag: samples.jsonl for a
// flag that names samples (vllmperf run's --samples), else result.json.
func defaultName(flag string) string {
	if strings.HasSuffix(flag, "samples") {
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

// Write writes the output with fn and puts it in place. Its error names
// the flag and the path.
func (o *File) Write(fn func(io.Writer) error) error {
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

// Discard removes an output that was never written (the run failed
// before its end). It is safe to call after Write.
func (o *File) Discard() {
	if o == nil || o.done {
		return
	}
	o.done = true
	_ = o.file.Close()
	if !o.inPlace {
		_ = os.Remove(o.file.Name())
	}
}

// SamePath reports whether a and b name one file: the same path once
// cleaned, or the same existing file through links.
func SamePath(a, b string) bool {
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	if errA == nil && errB == nil && absA == absB {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// Path is the path the file was asked for; "" for no file.
func (o *File) Path() string {
	if o == nil {
		return ""
	}
	return o.path
}
