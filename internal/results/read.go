package results

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/vllmperf/vllmperf/internal/run/sample"
)

// SampleLine is one line of samples.jsonl: a request of a run.
type SampleLine struct {
	Run string `json:"run"`
	Rep int    `json:"rep"`
	sample.Sample
}

// RunKey names one run of a folder: its name and repetition.
type RunKey struct {
	Name string
	Rep  int
}

// Key is the run's key.
func (r Run) Key() RunKey { return RunKey{Name: r.Name, Rep: r.Rep} }

// Folder is a results folder read back whole: the summary, every request
// and every sampler point, indexed by run. The report and the diagnosis
// work from it alone.
type Folder struct {
	// Dir is the folder read.
	Dir     string
	Summary *Summary
	samples map[RunKey][]sample.Sample
	series  map[RunKey][]SeriesLine
	// Cut says which files ended in a line cut short (a run stopped
	// mid-write), left out of the folder: one note each.
	Cut []string
}

// ReadFolder reads summary.json, samples.jsonl and timeseries.jsonl of dir.
// A missing or malformed file is an error that names it (and the line).
func ReadFolder(dir string) (*Folder, error) {
	sum, err := Read(dir)
	if err != nil {
		return nil, err
	}
	f := &Folder{Dir: dir, Summary: sum, samples: map[RunKey][]sample.Sample{}, series: map[RunKey][]SeriesLine{}}
	err = readLines(filepath.Join(dir, SamplesFile), &f.Cut, func(line []byte) error {
		var s SampleLine
		if err := json.Unmarshal(line, &s); err != nil {
			return err
		}
		k := RunKey{s.Run, s.Rep}
		f.samples[k] = append(f.samples[k], s.Sample)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = readLines(filepath.Join(dir, TimeSeriesFile), &f.Cut, func(line []byte) error {
		var p SeriesLine
		if err := json.Unmarshal(line, &p); err != nil {
			return err
		}
		k := RunKey{p.Run, p.Rep}
		f.series[k] = append(f.series[k], p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Samples are the run's requests, warm-up included, in the order written.
func (f *Folder) Samples(k RunKey) []sample.Sample { return f.samples[k] }

// Series are the run's sampler points in time order; T is seconds since
// the measured phase started (negative during warm-up).
func (f *Folder) Series(k RunKey) []SeriesLine { return f.series[k] }

// readLines calls fn for every non-empty line of the JSON Lines file path;
// an error names the file and the line. A last line without its line end
// that fn refuses is the end of a file cut mid-write: it is left out and
// noted in cut, the lines before it kept. A line longer than MaxLine is
// an error.
func readLines(path string, cut *[]string, fn func([]byte) error) error {
	fh, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("results: %s is missing: the folder is incomplete (the suite writes it with summary.json)", path)
	}
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	defer fh.Close()
	r := bufio.NewReader(fh)
	for n := 1; ; n++ {
		line, err := readLine(r)
		if len(line) > 0 && !isBlank(line) {
			if perr := fn(line); perr != nil {
				if errors.Is(err, io.EOF) && line[len(line)-1] != '\n' {
					*cut = append(*cut, fmt.Sprintf("%s:%d: the last line is cut short (%d bytes without a line end: the run was stopped mid-write) and was left out", path, n, len(line)))
					return nil
				}
				return fmt.Errorf("results: %s:%d: %w", path, n, perr)
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("results: %s:%d: %w", path, n, err)
		}
	}
}

// MaxLine bounds one line of samples.jsonl or timeseries.jsonl (a sample
// keeps its text only for structured output, well under this).
const MaxLine = 64 << 20

// readLine reads up to and with the next line end, or to the end of r
// (io.EOF), refusing a line longer than MaxLine.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLine {
			return nil, fmt.Errorf("a line longer than %d MiB: not a results file", MaxLine>>20)
		}
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}
