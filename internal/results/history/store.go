package history

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/request/dataset"
	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/vocab/setting"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
	"github.com/vllmperf/vllmperf/internal/vocab/vllmdate"
)

// The store's layout (docs/history.md):
//
//	STORE/vllmperf-history.json   {"format": 1}: marks the folder as a store
//	STORE/runs/<ID>/run.json      the run's record (Record)
//	STORE/runs/<ID>/bench.txt     the run's bench output, verbatim
//
// <ID> is the run's UTC date and short commit, 20261203T140102Z-8bbd94d,
// so that a listing sorts by date and two runs added on two branches of a
// git checkout never touch the same file.
const (
	MarkerFile = "vllmperf-history.json"
	RunsDir    = "runs"
	RecordFile = "run.json"
	BenchFile  = results.BenchFile
	// Format is the layout's version, written in the marker and in every
	// record; a store of another version is refused.
	Format = 1
	// IDLayout is the date part of a run's ID.
	IDLayout = "20060102T150405Z"
)

// ErrBadInput marks errors about the caller's input (a folder that is no
// store or no results folder, a malformed file, a bad option): the
// command's exit status 2.
var ErrBadInput = errors.New("bad input")

// badInput marks an error about the settings as ErrBadInput; the settings
// are named by their fields (package setting): "{Alpha}".
func badInput(format string, args ...any) error {
	return fmt.Errorf("%w: %w", ErrBadInput, settingError(format, args...))
}

// settingError words an error about the history's settings.
var settingError = setting.Scope("history")

// KeyConfig are the configuration lines that make a run's key: runs of one
// key form one series. They are the gate's DefaultConfigKeys (the setup two
// results must share to be compared) without the image: an image change
// is an event in a series, the upgrade the history is there to show. The
// data set is a benchmark's line, not a run's, and is left out too.
var KeyConfig = func() []string {
	var out []string
	for _, k := range input.DefaultConfigKeys {
		if k != "image" && k != dataset.ConfigKey {
			out = append(out, k)
		}
	}
	return out
}()

// EventConfig are the configuration lines whose change between two runs of
// a key is an event: the image and the vLLM version it reports.
var EventConfig = []string{"image", "vllm-version"}

// provenanceAppears reports a provenance key (gate.ProvenanceKeys: the
// image's digest, the driver, CUDA; their changes are events too) that
// one of two runs does not record: runs from before the lines were
// written are not a change.
func provenanceAppears(k, a, b string) bool {
	return (a == "" || b == "") && slices.Contains(input.ProvenanceKeys, k)
}

// Record is run.json: what the store keeps about a run besides its bench
// output.
type Record struct {
	Format int    `json:"format"`
	ID     string `json:"id"`
	// Date is when the run was measured (UTC).
	Date time.Time `json:"date"`
	// Commit is the revision of the code measured (a git SHA); Ref the
	// branch or tag, when given.
	Commit string `json:"commit"`
	Ref    string `json:"ref,omitempty"`
	// Key is the run's setup (KeyConfig as k=v, comma-separated).
	Key string `json:"key"`
	// Config holds every configuration line of the bench output (backend,
	// gpu, model, vllm-version, image, size).
	Config map[string]string `json:"config"`
	// Source is the results folder or file added.
	Source string `json:"source"`
	// BenchSHA256 is bench.txt's digest: the same results are not added
	// twice.
	BenchSHA256 string `json:"bench_sha256"`
	// Benchmarks and Values count the benchmarks and the values stored.
	Benchmarks int `json:"benchmarks"`
	Values     int `json:"values"`
	// Baseline is the baseline the run was gated against, when given: a
	// new digest is a re-baseline, an event.
	Baseline *FileRef `json:"baseline,omitempty"`
	// Notes are events given by hand (history add --event).
	Notes []string `json:"notes,omitempty"`
	// Checks are the suite's check outcomes from summary.json; nil when
	// the results had no summary.json.
	Checks *Checks `json:"checks,omitempty"`
}

// FileRef names a file and its digest.
type FileRef struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Checks are a run's check outcomes: counts by status, and every check
// that did not pass.
type Checks struct {
	Counts    map[verdict.Status]int `json:"counts"`
	NotPassed []CheckOutcome         `json:"not_passed,omitempty"`
}

// CheckOutcome is one check of one run (the suite's run name).
type CheckOutcome struct {
	Run    string         `json:"run"`
	Name   string         `json:"name"`
	Status verdict.Status `json:"status"`
	Detail string         `json:"detail,omitempty"`
}

// String is "44 PASS, 1 FAIL", PASS first.
func (c *Checks) String() string {
	if c == nil {
		return "not recorded"
	}
	var parts []string
	keys := make([]string, 0, len(c.Counts))
	for s := range c.Counts {
		keys = append(keys, string(s))
	}
	slices.SortFunc(keys, func(a, b string) int {
		if (a == string(verdict.Pass)) != (b == string(verdict.Pass)) {
			if a == string(verdict.Pass) {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d %s", c.Counts[verdict.Status(k)], k))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Run is a stored run: its record and its bench output, read.
type Run struct {
	Record
	// Dir is the run's folder in the store.
	Dir string
	// Input is bench.txt, read by the gate's reader.
	Input *input.Input
	// Benchmarks are bench.txt's benchmarks.
	Benchmarks []input.Benchmark
}

// Store is a history store: a folder of runs.
type Store struct {
	Dir string
}

type marker struct {
	Format int    `json:"format"`
	About  string `json:"about"`
}

// Open opens the store at dir; a folder without the marker is refused.
func Open(dir string) (*Store, error) {
	data, err := os.ReadFile(filepath.Join(dir, MarkerFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, badInput("%s is not a history store (no %s): give the folder `vllmperf history add {Store} DIR` writes", dir, MarkerFile)
	}
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	var m marker
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, badInput("%s: %v", filepath.Join(dir, MarkerFile), err)
	}
	if m.Format != Format {
		return nil, badInput("%s: format %d; this vllmperf reads format %d", filepath.Join(dir, MarkerFile), m.Format, Format)
	}
	return &Store{Dir: dir}, nil
}

// Init opens the store at dir, creating it (and its parents) when dir does
// not exist or is empty. A folder with other files and no marker is
// refused: a store is never written into another folder by mistake.
func Init(dir string) (*Store, error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("history: %w", err)
	case slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == MarkerFile }):
		return Open(dir)
	case slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return !strings.HasPrefix(e.Name(), ".") }):
		return nil, badInput("%s is not empty and is not a history store (no %s): give an empty or new folder", dir, MarkerFile)
	}
	if err := os.MkdirAll(filepath.Join(dir, RunsDir), 0o755); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	data, _ := json.MarshalIndent(marker{Format: Format, About: "vllmperf history store: runs/<id>/run.json and bench.txt (docs/history.md)"}, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, MarkerFile), append(data, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	return &Store{Dir: dir}, nil
}

// AddOptions describe the run being added.
type AddOptions struct {
	// Commit is the revision measured (required).
	Commit string
	// Ref is the branch or tag (optional).
	Ref string
	// Date is when the run was measured; zero takes the earliest run date
	// of summary.json (written in the measuring machine's zone, read in
	// this one's), else the time of adding.
	Date time.Time
	// Baseline is the baseline file the run was gated against (optional).
	Baseline string
	// Notes are known events to mark at this run (optional).
	Notes []string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Add stores the run of src: a results folder (its bench.txt, and
// summary.json's checks when present) or a bench file.
func (s *Store) Add(src string, o AddOptions) (*Run, error) {
	if strings.TrimSpace(o.Commit) == "" {
		return nil, badInput("no commit: give {Commit} SHA (the workflow passes $GITHUB_SHA)")
	}
	benchPath, sumDir, err := sources(src)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(benchPath)
	if err != nil {
		return nil, badInput("%v", err)
	}
	in, err := input.Read(strings.NewReader(string(data)), benchPath)
	if err != nil {
		return nil, badInput("%v", err)
	}
	if err := checkWhole(data, in, benchPath, sumDir); err != nil {
		return nil, err
	}
	rec := Record{Format: Format, Commit: strings.TrimSpace(o.Commit), Ref: o.Ref, Source: src, Notes: o.Notes}
	sum := sha256.Sum256(data)
	rec.BenchSHA256 = hex.EncodeToString(sum[:])
	if rec.Config, rec.Key, err = runConfig(in, benchPath); err != nil {
		return nil, err
	}
	benches, err := in.Benchmarks(nil)
	if err != nil {
		return nil, err
	}
	rec.Benchmarks = len(benches)
	for _, b := range benches {
		for _, v := range b.Values {
			rec.Values += len(v)
		}
	}
	var summaryDate time.Time
	if sumDir != "" {
		if rec.Checks, summaryDate, err = readSummary(sumDir); err != nil {
			return nil, err
		}
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	switch {
	case !o.Date.IsZero():
		rec.Date = o.Date.UTC()
	case !summaryDate.IsZero():
		rec.Date = summaryDate.UTC()
	default:
		rec.Date = now().UTC()
	}
	rec.Date = rec.Date.Truncate(time.Second)
	if o.Baseline != "" {
		b, err := os.ReadFile(o.Baseline)
		if err != nil {
			return nil, badInput("{Baseline}: %v", err)
		}
		d := sha256.Sum256(b)
		rec.Baseline = &FileRef{Path: o.Baseline, SHA256: hex.EncodeToString(d[:])}
	}

	runs, err := s.records()
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		if r.BenchSHA256 == rec.BenchSHA256 {
			return nil, badInput("%s is already in the store as run %s (same bench.txt)", src, r.ID)
		}
	}
	rec.ID = newID(rec.Date, rec.Commit, runs)
	return s.write(rec, data, in, benches)
}

// sources finds the bench file of src and the folder holding its
// summary.json ("" when there is none).
func sources(src string) (bench, sumDir string, err error) {
	st, err := os.Stat(src)
	if err != nil {
		return "", "", badInput("%v: give a results folder (with bench.txt) or a bench file", err)
	}
	if !st.IsDir() {
		return src, "", nil
	}
	bench = filepath.Join(src, BenchFile)
	if _, err := os.Stat(bench); err != nil {
		return "", "", badInput("%s has no %s: a benchmark run of the suite writes it there (VLLMPERF_RESULTS=DIR go test -run '^$' -bench Perf ...; make bench does), or tee go test -bench's output into it", src, BenchFile)
	}
	if _, err := os.Stat(filepath.Join(src, results.SummaryFile)); err == nil {
		sumDir = src
	}
	return bench, sumDir, nil
}

// runConfig returns the file's configuration lines and the key; a file
// whose key lines differ between benchmarks mixes setups and is refused.
func runConfig(in *input.Input, name string) (map[string]string, string, error) {
	cfg := map[string]string{}
	for _, r := range in.Results {
		for _, c := range r.Config {
			if !c.File {
				continue
			}
			if v, seen := cfg[c.Key]; seen && v != string(c.Value) && slices.Contains(KeyConfig, c.Key) {
				return nil, "", badInput("%s mixes setups: %s is %q and %q; add the results of one setup per run", name, c.Key, v, string(c.Value))
			}
			cfg[c.Key] = string(c.Value)
		}
	}
	return cfg, KeyOf(cfg), nil
}

// KeyOf is the key of a configuration: KeyConfig's lines as k=v, joined by
// commas ("(none)" for a missing line).
func KeyOf(cfg map[string]string) string {
	parts := make([]string, 0, len(KeyConfig))
	for _, k := range KeyConfig {
		v := cfg[k]
		if v == "" {
			v = "(none)"
		}
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ",")
}

// readSummary reads the checks and the earliest run date of summary.json.
func readSummary(dir string) (*Checks, time.Time, error) {
	sum, err := results.Read(dir)
	if err != nil {
		return nil, time.Time{}, badInput("%v", err)
	}
	c := &Checks{Counts: map[verdict.Status]int{}}
	var first time.Time
	for _, r := range sum.Runs {
		for _, res := range r.Checks {
			c.Counts[res.Status]++
			if res.Status != verdict.Pass {
				c.NotPassed = append(c.NotPassed, CheckOutcome{Run: r.Name, Name: res.Name, Status: res.Status, Detail: res.Detail})
			}
		}
		var meta struct {
			Date string `json:"date"`
		}
		if json.Unmarshal(r.Result, &meta) == nil && meta.Date != "" {
			if t, err := time.ParseInLocation(vllmdate.Layout, meta.Date, time.Local); err == nil && (first.IsZero() || t.Before(first)) {
				first = t
			}
		}
	}
	return c, first, nil
}

// newID is the date and short commit, with -2, -3, … when taken.
func newID(date time.Time, commit string, runs []Record) string {
	short := commit
	if len(short) > 7 {
		short = short[:7]
	}
	base := date.UTC().Format(IDLayout) + "-" + sanitize(short)
	id := base
	for n := 2; slices.ContainsFunc(runs, func(r Record) bool { return r.ID == id }); n++ {
		id = fmt.Sprintf("%s-%d", base, n)
	}
	return id
}

// sanitize keeps an ID to letters, digits, '.', '_' and '-'.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}

// write stores the run under runs/<ID>: written into a temporary folder
// first and renamed, so a store never holds half a run.
func (s *Store) write(rec Record, bench []byte, in *input.Input, benches []input.Benchmark) (*Run, error) {
	runs := filepath.Join(s.Dir, RunsDir)
	if err := os.MkdirAll(runs, 0o755); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	tmp, err := os.MkdirTemp(runs, ".add-")
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	defer os.RemoveAll(tmp)
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, RecordFile), append(data, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, BenchFile), bench, 0o644); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	dir := filepath.Join(runs, rec.ID)
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	return &Run{Record: rec, Dir: dir, Input: in, Benchmarks: benches}, nil
}

// records reads every run.json of the store.
func (s *Store) records() ([]Record, error) {
	entries, err := os.ReadDir(filepath.Join(s.Dir, RunsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	var out []Record
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(s.Dir, RunsDir, e.Name(), RecordFile)
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, badInput("%v: every runs/<id> folder holds %s and %s", err, RecordFile, BenchFile)
		}
		var r Record
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, badInput("%s: %v", path, err)
		}
		switch {
		case r.Format != Format:
			return nil, badInput("%s: format %d; this vllmperf reads format %d", path, r.Format, Format)
		case r.ID != e.Name():
			return nil, badInput("%s: id %q is not its folder's name %q", path, r.ID, e.Name())
		case r.Date.IsZero() || r.Key == "":
			return nil, badInput("%s: no date or key", path)
		}
		out = append(out, r)
	}
	return out, nil
}

// Runs reads every run of the store, oldest first (by date, then ID).
func (s *Store) Runs() ([]*Run, error) {
	recs, err := s.records()
	if err != nil {
		return nil, err
	}
	slices.SortFunc(recs, func(a, b Record) int {
		if c := a.Date.Compare(b.Date); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	out := make([]*Run, 0, len(recs))
	for _, rec := range recs {
		dir := filepath.Join(s.Dir, RunsDir, rec.ID)
		in, err := input.ReadFile(filepath.Join(dir, BenchFile))
		if err != nil {
			return nil, badInput("run %s: %v", rec.ID, err)
		}
		benches, err := in.Benchmarks(nil)
		if err != nil {
			return nil, err
		}
		out = append(out, &Run{Record: rec, Dir: dir, Input: in, Benchmarks: benches})
	}
	return out, nil
}

// GitHead is the commit checked out in the working directory, for a
// default --commit outside CI; an error says to give one.
func GitHead() (string, error) {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "", badInput("no {Commit} given and `git rev-parse HEAD` failed (%v): give {Commit} SHA", err)
	}
	return strings.TrimSpace(string(out)), nil
}
