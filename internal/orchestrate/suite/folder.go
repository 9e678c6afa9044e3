package suite

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/results/report"
)

// One go test process writes one results folder. `go test -run Perf .`
// runs TestPerf and TestPerfPrefixCachingOff, and a run may add the
// benchmarks: each makes a Suite, and with VLLMPERF_RESULTS set they all
// write there. The first to open the folder creates it (results.Create,
// which refuses a folder an earlier process left); the others of the same
// process share its Writer, so that summary.json lists every run of the
// process. A variant of a profile (e.g. prefix caching turned off) runs
// under a name of its own, so that names never mix two setups.

// folders are the results folders this process opened, by absolute path.
var folders = struct {
	sync.Mutex
	m map[string]*folder
}{m: map[string]*folder{}}

// folder is a results folder this process writes, and how many open
// suites write it.
type folder struct {
	w     *results.Writer
	users int
}

// openFolder returns the process's Writer for dir: the one a suite of
// this process opened before (open or closed since), or a new folder.
func openFolder(dir string) (*results.Writer, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	folders.Lock()
	defer folders.Unlock()
	f, ok := folders.m[abs]
	if !ok {
		w, err := results.Create(dir)
		if err != nil {
			return nil, err
		}
		f = &folder{w: w}
		folders.m[abs] = f
	}
	f.users++
	return f.w, nil
}

// closeFolder writes the folder's summary.json with every run so far;
// the last of its open suites also writes its report.html and report.md
// (package report; `vllmperf report DIR` re-renders them). While another
// suite still writes runs the report waits for it: it reads samples.jsonl,
// which that suite appends to.
func closeFolder(w *results.Writer) error {
	abs, err := filepath.Abs(w.Dir())
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	folders.Lock()
	defer folders.Unlock()
	last := true
	if f, ok := folders.m[abs]; ok {
		f.users--
		last = f.users <= 0
	}
	if err := w.Close(); err != nil {
		return err
	}
	if !last {
		return nil
	}
	_, err = report.WriteFolder(w.Dir())
	return err
}

// opened reports whether this process opened the results folder dir.
func opened(dir string) bool {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	folders.Lock()
	defer folders.Unlock()
	_, ok := folders.m[abs]
	return ok
}

// Main runs a test binary's tests and benchmarks (m.Run, from the
// package's TestMain) and returns the exit status. When benchmarks run
// (-test.bench) with a results folder (VLLMPERF_RESULTS), it copies the
// process's standard output as it goes and, at the end, writes it into
// the folder as bench.txt, unless the folder has a bench.txt already: a
// tee of the same output (make bench and make perf-gate write theirs),
// which is kept as it is. So a `go test -bench Perf` run leaves a folder
// that `vllmperf gate`, `vllmperf history add` and `vllmperf report` read
// with no tee. The copy holds what the test binary printed: the go
// command's own last line (ok or FAIL, and the package) is not in it, and
// benchfmt readers skip such lines anyway.
func Main(m interface{ Run() int }) int {
	if !flag.Parsed() {
		flag.Parse()
	}
	warnGPUSets()
	dir := os.Getenv(EnvResults)
	if dir == "" || !benchmarking() {
		return m.Run()
	}
	orig := os.Stdout
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "results: %s: no copy of the output for bench.txt: %v\n", dir, err)
		return m.Run()
	}
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(teeWriter{orig, &out}, r)
	}()
	os.Stdout = w
	code := m.Run()
	os.Stdout = orig
	_ = w.Close()
	<-done
	_ = r.Close()
	if err := writeBench(dir, out.Bytes()); err != nil {
		fmt.Fprintln(orig, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// benchmarking reports whether the test binary runs benchmarks.
func benchmarking() bool {
	f := flag.Lookup("test.bench")
	return f != nil && f.Value.String() != ""
}

// writeBench writes output as dir's bench.txt when this process wrote the
// folder and no bench.txt is there (a tee's is kept). test2json's framing
// byte (go test -json) is dropped, so the file reads as plain go test
// output.
func writeBench(dir string, output []byte) error {
	if !opened(dir) {
		return nil // no suite wrote the folder: no benchmark of the suite ran
	}
	path := filepath.Join(dir, results.BenchFile)
	if _, err := os.Stat(path); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("results: %w", err)
	}
	output = bytes.ReplaceAll(output, []byte{0x16}, nil)
	if err := results.WriteBench(dir, output); err != nil {
		return fmt.Errorf("results: %s: the suite's copy of the output: %w", path, err)
	}
	return nil
}

// teeWriter writes to the terminal, as far as it can, and always to the
// copy: a closed standard output must not stall the tests.
type teeWriter struct {
	term io.Writer
	copy *bytes.Buffer
}

func (t teeWriter) Write(p []byte) (int, error) {
	_, _ = t.term.Write(p)
	return t.copy.Write(p)
}
