package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// Load reads the results folder dir (and its gate.json, when there is one)
// and builds its report.
func Load(dir string) (*Report, error) {
	f, err := results.ReadFolder(dir)
	if err != nil {
		return nil, err
	}
	g, err := ReadGate(dir)
	if err != nil {
		return nil, err
	}
	return Build(f, g)
}

// WriteFolder writes report.html and report.md into the results folder
// dir, from the folder alone, and returns their paths.
func WriteFolder(dir string) ([]string, error) {
	r, err := Load(dir)
	if err != nil {
		return nil, err
	}
	return WriteFiles(r)
}

// Folder is the results folder the report was built from.
func (r *Report) Folder() *results.Folder { return r.folder }

// WriteFiles writes report.html and report.md into the report's folder
// and returns their paths. Each file is written whole or not at all.
func WriteFiles(r *Report) ([]string, error) {
	var paths []string
	for _, out := range []struct {
		name  string
		write func(*bytes.Buffer, *Report) error
	}{
		{HTMLFile, func(b *bytes.Buffer, r *Report) error { return HTML(b, r) }},
		{MarkdownFile, func(b *bytes.Buffer, r *Report) error { return Markdown(b, r) }},
	} {
		var buf bytes.Buffer
		if err := out.write(&buf, r); err != nil {
			return paths, err
		}
		path := filepath.Join(r.folder.Dir, out.name)
		if err := writeAtomic(path, buf.Bytes()); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// writeAtomic writes data to a temporary file next to path and renames it
// into place, so that a reader never sees half a report.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("report: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// mkdir makes dir and its parents.
func mkdir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// Print is `vllmperf report`: it prints the folder dir's runs, knees and
// diagnosis on w, adds the history of store to the report when store is
// given (history.html is written, its headline printed), writes
// report.html and report.md, and says which files it wrote.
func Print(w io.Writer, dir, store string, th *thresholds.Set) error {
	r, err := Load(dir)
	if err != nil {
		return err
	}
	for _, note := range r.Folder().Cut {
		fmt.Fprintf(w, "warning: %s\n", note)
	}
	if err := Text(w, r.Folder().Summary); err != nil {
		return err
	}
	if err := DiagnosisText(w, r.Diagnosis); err != nil {
		return err
	}
	if store != "" {
		page, err := r.AddHistory(store, HistoryOptions{Thresholds: th})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "history: %s\nwrote %s\n", r.History.Check.Headline(), page)
	}
	paths, err := WriteFiles(r)
	for _, p := range paths {
		fmt.Fprintf(w, "wrote %s\n", p)
	}
	return err
}
