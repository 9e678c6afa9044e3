// Package merge joins results folders (docs/bench-format.md) written by
// several go test processes, each running some of the profiles (a runner
// per profile in perf-gate.yml's matrix, or a process per GPU set on one
// runner: package spread), into one folder that the gate, the report and
// the history read as if one process had run every profile.
//
// What a folder holds, and how it is joined:
//
//   - summary.json: the profiles' configurations side by side, the runs,
//     knees and capacity searches one folder after another, joined as
//     JSON so that a field added to the file later is joined (a list),
//     kept (the same in every folder) or refused, never dropped;
//   - samples.jsonl and timeseries.jsonl: one folder's lines after
//     another's (every line names its run, and no two folders share one);
//   - bench.txt: one folder's benchfmt output after another's, the
//     configuration lines of the one before cleared in between, so that
//     no key leaks from one folder's benchmarks onto the next's;
//   - report.html and report.md are rendered again from the merged folder;
//     gate.json and the other pages a later step writes (history.html,
//     bisect.html) describe one part only and are left out;
//   - anything else (traces/ of the torch profiler, a tee's files) is
//     copied by its path, and two folders holding one path is an error.
//
// Folders are refused when their key differs (KeyConfig: the backend,
// image, GPU, model, size or vLLM version of their profiles; the message
// names the key and both values), when two hold the same profile, or when
// only some of them hold a bench.txt.
package merge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/results/report"
	"github.com/vllmperf/vllmperf/internal/vocab/setting"
)

// KeyConfig are the profile configuration keys (summary.json's config,
// the suite's benchfmt config lines) that must agree across the folders:
// together they are the run's perfgate key, less what a merge joins
// (profiles and scenarios) and where it ran (the runner). A key whose
// value differs between the profiles of one folder (a profile that names
// its own model) is the profile's, not the folder's, and is compared no
// further.
var KeyConfig = []string{"backend", "image", "gpu", "model", "size", "vllm-version"}

// derived are files a later step renders from a folder: the report is
// rendered again from the merged folder; the others speak of one part.
var derived = []string{report.HTMLFile, report.MarkdownFile, report.GateFile, report.HistoryFile, report.BisectFile}

// joined are the data files the merge joins itself.
var joined = []string{results.SummaryFile, results.SamplesFile, results.TimeSeriesFile, results.BenchFile}

// Result says what a merge wrote.
type Result struct {
	// Out is the merged folder.
	Out string
	// Profiles are the merged profiles, in the folders' order.
	Profiles []string
	// Runs counts the runs of summary.json; Benchmarks whether a
	// bench.txt was written.
	Runs       int
	Benchmarks bool
	// Left are the files left out (a part's gate.json), by folder.
	Left []string
}

// part is one folder to merge.
type part struct {
	dir      string
	sum      *results.Summary
	raw      []byte // summary.json as written
	profiles []string
	bench    []byte // nil: the folder has no bench.txt
}

// Folders merges dirs, in their order, into out, which must not exist
// yet or be empty.
func Folders(out string, dirs []string) (*Result, error) {
	if len(dirs) == 0 {
		return nil, settingError("merge: no results folder given: name the folders to merge (vllmperf merge {Out} DIR DIR...)")
	}
	if err := checkOut(out, dirs); err != nil {
		return nil, err
	}
	parts := make([]*part, 0, len(dirs))
	for _, dir := range dirs {
		p, err := readPart(dir)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	if err := compatible(parts); err != nil {
		return nil, err
	}
	_, statErr := os.Stat(out)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	res, err := write(out, parts)
	if err != nil && errors.Is(statErr, fs.ErrNotExist) {
		_ = os.RemoveAll(out) // a merge that failed leaves no half folder it made
	}
	return res, err
}

// write writes the merged folder.
func write(out string, parts []*part) (*Result, error) {
	res := &Result{Out: out}
	if err := writeSummary(out, parts, res); err != nil {
		return nil, err
	}
	for _, name := range []string{results.SamplesFile, results.TimeSeriesFile} {
		if err := concatLines(out, name, parts); err != nil {
			return nil, err
		}
	}
	if err := writeBench(out, parts, res); err != nil {
		return nil, err
	}
	if err := copyRest(out, parts, res); err != nil {
		return nil, err
	}
	if _, err := report.WriteFolder(out); err != nil {
		return nil, fmt.Errorf("merge: the report of %s: %w", out, err)
	}
	return res, nil
}

// settingError words an error about the merge's settings, naming them by
// field (package setting): {Out} is the output folder.
var settingError = setting.Scope("merge")

// checkOut refuses an out folder that holds anything, or that is one of
// the folders merged.
func checkOut(out string, dirs []string) error {
	if strings.TrimSpace(out) == "" {
		return settingError("merge: no output folder: give {Out} DIR, a new folder")
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	for _, d := range dirs {
		if abs, err := filepath.Abs(d); err == nil && abs == absOut {
			return settingError("merge: {Out} %s is one of the folders merged: give a new folder", out)
		}
	}
	entries, err := os.ReadDir(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return settingError("merge: {Out} %s: %w", out, err)
	case len(entries) > 0:
		return settingError("merge: {Out} %s already holds %s: give a new folder", out, entries[0].Name())
	}
	return nil
}

// readPart reads a folder's summary.json and bench.txt.
func readPart(dir string) (*part, error) {
	sum, err := results.Read(dir)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, results.SummaryFile))
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	p := &part{dir: dir, sum: sum, raw: raw}
	seen := map[string]bool{}
	add := func(name string) {
		if name != "" && !seen[name] {
			seen[name] = true
			p.profiles = append(p.profiles, name)
		}
	}
	for _, r := range sum.Runs {
		add(r.Profile)
	}
	for _, k := range sum.Knees {
		add(k.Profile)
	}
	for _, c := range sum.Capacities {
		add(c.Profile)
	}
	for _, name := range slices.Sorted(maps.Keys(sum.Config)) {
		add(name)
	}
	b, err := os.ReadFile(filepath.Join(dir, results.BenchFile))
	switch {
	case err == nil:
		if b == nil {
			b = []byte{}
		}
		p.bench = b
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("merge: %w", err)
	}
	return p, nil
}

// compatible refuses folders of different keys, folders that share a
// profile, and a mix of folders with and without bench.txt.
func compatible(parts []*part) error {
	owner := map[string]string{}
	for _, p := range parts {
		for _, name := range p.profiles {
			if d, ok := owner[name]; ok {
				return fmt.Errorf("merge: profile %s is in both %s and %s: a profile runs in one of the merged folders only (give each process its own VLLMPERF_PROFILES)", name, d, p.dir)
			}
			owner[name] = p.dir
		}
	}
	first := parts[0]
	for _, p := range parts[1:] {
		for _, key := range KeyConfig {
			a, aok := folderValue(first.sum, key)
			b, bok := folderValue(p.sum, key)
			if aok && bok && a != b {
				return fmt.Errorf("merge: the folders' keys differ: %s is %q in %s but %q in %s: merge only runs of one key (the same backend, image, GPU, model, size and vLLM version)", key, a, first.dir, b, p.dir)
			}
		}
		if (first.bench == nil) != (p.bench == nil) {
			with, without := first.dir, p.dir
			if first.bench == nil {
				with, without = p.dir, first.dir
			}
			return fmt.Errorf("merge: %s holds a %s but %s does not: merge folders of benchmark runs (go test -bench Perf) or of test runs, not both", with, results.BenchFile, without)
		}
	}
	return nil
}

// folderValue is the value every profile of the folder has for key; ok
// is false when the profiles disagree or none sets it.
func folderValue(sum *results.Summary, key string) (string, bool) {
	var v string
	found := false
	for _, name := range slices.Sorted(maps.Keys(sum.Config)) {
		cv, ok := sum.Config[name][key]
		if !ok {
			continue
		}
		if found && cv != v {
			return "", false
		}
		v, found = cv, true
	}
	return v, found
}

// writeSummary writes the merged summary.json. It joins the files as
// JSON, not as results.Summary, so that a field it does not know (one
// added to the folder since) is joined too, or refused, never dropped:
// arrays (runs, knees, capacities) one folder's after another's, objects
// (config) key by key, a key in two folders only with one value, and any
// other value only where every folder has the same.
func writeSummary(out string, parts []*part, res *Result) error {
	sum := map[string]json.RawMessage{}
	owner := map[string]string{}
	for _, p := range parts {
		res.Profiles = append(res.Profiles, p.profiles...)
		var top map[string]json.RawMessage
		if err := json.Unmarshal(p.raw, &top); err != nil {
			return fmt.Errorf("merge: %s: %w", filepath.Join(p.dir, results.SummaryFile), err)
		}
		for _, key := range slices.Sorted(maps.Keys(top)) {
			joined, err := joinJSON(sum[key], top[key], owner[key] != "")
			if err != nil {
				return fmt.Errorf("merge: summary.json's %s: %s and %s: %w", key, owner[key], p.dir, err)
			}
			sum[key], owner[key] = joined, p.dir
		}
	}
	var runs []json.RawMessage
	if err := json.Unmarshal(sum["runs"], &runs); err == nil {
		res.Runs = len(runs)
	}
	data, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	return writeFile(out, results.SummaryFile, append(data, '\n'))
}

// joinJSON joins one summary key's value b onto a, the folders' before
// (seen says whether any had the key).
func joinJSON(a, b json.RawMessage, seen bool) (json.RawMessage, error) {
	if !seen {
		return b, nil
	}
	var aList, bList []json.RawMessage
	if json.Unmarshal(a, &aList) == nil && json.Unmarshal(b, &bList) == nil {
		return json.Marshal(append(aList, bList...))
	}
	var aObj, bObj map[string]json.RawMessage
	if json.Unmarshal(a, &aObj) == nil && json.Unmarshal(b, &bObj) == nil && aObj != nil && bObj != nil {
		for k, v := range bObj {
			if old, ok := aObj[k]; ok && !jsonEqual(old, v) {
				return nil, fmt.Errorf("%s differs (%s, %s): merge joins folders that do not disagree", k, old, v)
			}
			aObj[k] = v
		}
		return json.Marshal(aObj)
	}
	if !jsonEqual(a, b) {
		return nil, fmt.Errorf("differs (%s, %s): merge joins folders that do not disagree", a, b)
	}
	return a, nil
}

// jsonEqual compares two JSON values, whatever their spacing.
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
}

// concatLines joins a JSON Lines file of every folder; a folder without
// it adds nothing.
func concatLines(out, name string, parts []*part) error {
	var buf bytes.Buffer
	for _, p := range parts {
		b, err := os.ReadFile(filepath.Join(p.dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		buf.Write(b)
		if len(b) > 0 && b[len(b)-1] != '\n' {
			buf.WriteByte('\n')
		}
	}
	return writeFile(out, name, buf.Bytes())
}

// configLine is a benchfmt configuration line: a key that starts with a
// lower-case letter and holds no space or upper-case letter, a colon,
// then a space or the end of the line.
var configLine = regexp.MustCompile(`^([a-z][^\sA-Z:]*):(?:[ \t]|$)`)

// writeBench joins the folders' bench.txt, clearing the configuration
// keys of the folders before each next one.
func writeBench(out string, parts []*part, res *Result) error {
	if parts[0].bench == nil {
		return nil
	}
	var buf bytes.Buffer
	set := map[string]bool{}
	for i, p := range parts {
		if i > 0 {
			keys := slices.Sorted(maps.Keys(set))
			fmt.Fprintf(&buf, "\n")
			for _, k := range keys {
				fmt.Fprintf(&buf, "%s:\n", k)
			}
		}
		for _, line := range strings.Split(string(p.bench), "\n") {
			if m := configLine.FindStringSubmatch(line); m != nil {
				set[m[1]] = true
			}
		}
		buf.Write(p.bench)
		if len(p.bench) > 0 && p.bench[len(p.bench)-1] != '\n' {
			buf.WriteByte('\n')
		}
	}
	res.Benchmarks = true
	return writeFile(out, results.BenchFile, buf.Bytes())
}

// copyRest copies every other entry of the folders into out by its path;
// two folders holding one file is an error.
func copyRest(out string, parts []*part, res *Result) error {
	from := map[string]string{}
	for _, p := range parts {
		err := filepath.WalkDir(p.dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(p.dir, path)
			if err != nil || rel == "." {
				return err
			}
			top := !strings.ContainsRune(rel, filepath.Separator)
			switch {
			case top && slices.Contains(joined, rel):
				return nil
			case top && slices.Contains(derived, rel):
				if rel != report.HTMLFile && rel != report.MarkdownFile {
					res.Left = append(res.Left, filepath.Join(p.dir, rel))
				}
				return nil
			case strings.HasPrefix(d.Name(), "."): // a writer's temporary file
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			case d.IsDir():
				return os.MkdirAll(filepath.Join(out, rel), 0o755)
			case !d.Type().IsRegular():
				return fmt.Errorf("%s is not a regular file: a results folder holds files and folders only", path)
			}
			if other, ok := from[rel]; ok {
				return fmt.Errorf("both %s and %s hold %s: the merged folder can keep only one", other, p.dir, rel)
			}
			from[rel] = p.dir
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(out, rel), b, 0o644)
		})
		if err != nil {
			return fmt.Errorf("merge: %w", err)
		}
	}
	return nil
}

// writeFile writes one file of the merged folder.
func writeFile(out, name string, data []byte) error {
	if err := os.WriteFile(filepath.Join(out, name), data, 0o644); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	return nil
}

// String says what the merge wrote, in one line.
func (r *Result) String() string {
	s := fmt.Sprintf("merge: %d runs of profiles %v into %s", r.Runs, r.Profiles, r.Out)
	if len(r.Left) > 0 {
		s += fmt.Sprintf(" (left out, one part's only: %s)", strings.Join(r.Left, ", "))
	}
	return s
}
