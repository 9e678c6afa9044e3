package outfile

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Replace writes path with fn by a temporary file beside it renamed onto
// it: a write that fails (a full disk, an error of fn) leaves the old file
// as it was and no temporary file behind. A new file gets mode perm; an
// existing one keeps its mode. Its error names the path.
func Replace(path string, perm fs.FileMode, fn func(io.Writer) error) error {
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	bw := bufio.NewWriter(f)
	err = fn(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), perm)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	return nil
}

// ReplaceBytes is Replace with the file's whole content.
func ReplaceBytes(path string, perm fs.FileMode, data []byte) error {
	return Replace(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
