package perfgate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/vllmperf/vllmperf/internal/filelock"
	"github.com/vllmperf/vllmperf/internal/outfile"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// EnvStore names the baseline store's folder. Default: the user's cache
// folder (os.UserCacheDir: ~/.cache/vllmperf/baselines on Linux), which
// outlives a workflow's checkout on a self-hosted runner; every key has a
// folder of its own (docs/gpu-runners.md).
var EnvStore = envvar.BaselineStore.Name

// The files of a key's folder.
const (
	BaselineFile = "baseline.txt" // the baseline, benchfmt
	MetaFile     = "baseline.json"
	LastFile     = "last.txt" // the newest run on the key (the plan's estimate)
	LockFile     = ".lock"    // serializes the processes that write the key (package filelock)
)

// Store holds one baseline per key.
type Store struct{ Dir string }

// DefaultStore is $VLLMPERF_BASELINE_STORE, else the user cache's.
func DefaultStore() (Store, error) {
	if d := os.Getenv(EnvStore); d != "" {
		return Store{Dir: d}, nil
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return Store{}, fmt.Errorf("no baseline store: set %s (%w)", EnvStore, err)
	}
	return Store{Dir: filepath.Join(c, "vllmperf", "baselines")}, nil
}

// Meta says where a baseline came from.
type Meta struct {
	Key        Key       `json:"key"`
	RecordedAt time.Time `json:"recorded_at"`
	// Commit and Event are GITHUB_SHA and GITHUB_EVENT_NAME when set.
	Commit string `json:"commit,omitempty"`
	Event  string `json:"event,omitempty"`
	Count  int    `json:"count"`
	// Provisional: recorded by a pull request's first run, as perf-gate
	// did before pull requests stopped recording (nobaseline.go); still
	// read from older stores: the next refresh (a push to main) replaces
	// it when its verdict is PASS or INCONCLUSIVE, never a FAIL.
	Provisional bool `json:"provisional"`
}

// Path is a file of the key's folder.
func (s Store) Path(k Key, file string) string { return filepath.Join(s.Dir, k.Slug(), file) }

// Baseline returns the key's baseline file and its Meta; ok false when
// the key has none.
func (s Store) Baseline(k Key) (path string, m Meta, ok bool, err error) {
	path = s.Path(k, BaselineFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return path, m, false, nil
	} else if err != nil {
		return path, m, false, err
	}
	data, err := os.ReadFile(s.Path(k, MetaFile))
	if err == nil {
		err = json.Unmarshal(data, &m)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return path, m, true, fmt.Errorf("%s: %w", s.Path(k, MetaFile), err)
	}
	return path, m, true, nil
}

// ErrRecorded is Record's answer when another run recorded the key's
// baseline first.
var ErrRecorded = errors.New("a baseline for this key was recorded by another run meanwhile")

// Record stores bench (a file) as the key's baseline; replace says
// whether an existing one is replaced (a refresh) or kept (a first
// record: then ErrRecorded, and the other run's baseline stands). The
// file appears whole or not at all: written aside, then linked (first
// record: fails if one exists) or renamed (refresh) into place.
func (s Store) Record(k Key, bench string, m Meta, replace bool) error {
	dir := filepath.Join(s.Dir, k.Slug())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// The baseline and its metadata are one record: two runs refreshing
	// the key at once write one after the other, never a mix.
	unlock, err := filelock.Lock(filepath.Join(dir, LockFile))
	if err != nil {
		return err
	}
	defer unlock()
	data, err := os.ReadFile(bench)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".baseline-*.txt")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	final := filepath.Join(dir, BaselineFile)
	if replace {
		err = os.Rename(tmp.Name(), final)
	} else if err = os.Link(tmp.Name(), final); errors.Is(err, fs.ErrExist) {
		return ErrRecorded
	}
	if err != nil {
		return err
	}
	meta, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return outfile.ReplaceBytes(filepath.Join(dir, MetaFile), 0o644, append(meta, '\n'))
}

// SaveLast keeps bench as the key's newest run.
func (s Store) SaveLast(k Key, bench string) error {
	data, err := os.ReadFile(bench)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(s.Dir, k.Slug()), 0o755); err != nil {
		return err
	}
	unlock, err := filelock.Lock(s.Path(k, LockFile))
	if err != nil {
		return err
	}
	defer unlock()
	return outfile.ReplaceBytes(s.Path(k, LastFile), 0o644, data)
}
