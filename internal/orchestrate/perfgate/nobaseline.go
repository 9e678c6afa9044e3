package perfgate

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// A pull request is never green for want of a baseline: the key holds the
// image, model, profiles and scenarios, so the pull request that bumps the
// pinned vLLM image has no baseline by construction, and recording its run
// would pass the very change the gate exists for. Only a push to main (or a
// schedule, or a run outside Actions) records a key's first baseline.

// isPullRequest says whether GITHUB_EVENT_NAME is a pull request's.
func isPullRequest(event string) bool {
	return event == "pull_request" || event == "pull_request_target"
}

// maxStoreKeys bounds how many of the store's keys noBaseline reads to
// name the nearest; maxMetaBytes bounds each baseline.json read.
const (
	maxStoreKeys = 1000
	maxMetaBytes = 64 << 10
)

// noBaseline is a pull request's answer on a key with no baseline:
// nothing runs, nothing is recorded, exit 3 (undecided) with the reason
// and the fix, naming the store's nearest keys and how they differ.
func (o Options) noBaseline(key Key) int {
	msg := fmt.Sprintf("no baseline for this key, and a pull request does not record one: nothing was run or gated (exit 3). Key: %s. ", key) +
		"Fix: record the key's baseline on main first (a push to main, or Actions → perf-gate → Run workflow on main, runs it with this key and records it); " +
		"for a pull request that changes the image or model, gate the two images against each other with `vllmperf upgrade-gate --old OLD --new NEW` (docs/gate.md), " +
		fmt.Sprintf("or gate against the base branch's baseline with %s=<its baseline.txt>, which compares across the difference named below", envvar.Baseline.Name)
	near := o.Store.nearest(key)
	if len(near) == 0 {
		msg += fmt.Sprintf(" (the store %s holds no baseline to name).", o.Store.Dir)
	} else {
		msg += ". Nearest stored baselines: " + strings.Join(near, "; ") + "."
	}
	o.say("error", msg)
	return exitstatus.Undecided
}

// nearest lists the store's baselines whose key differs from k in the
// fewest fields (at most three of them), each as its path and the
// differences ("image=a here, b stored").
func (s Store) nearest(k Key) []string {
	type cand struct {
		path  string
		diffs []string
	}
	var cands []cand
	for _, m := range s.metas() {
		if d := k.Diff(m.Key); len(d) > 0 {
			cands = append(cands, cand{path: s.Path(m.Key, BaselineFile), diffs: d})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return len(cands[i].diffs) < len(cands[j].diffs) })
	var out []string
	for i, c := range cands {
		if i == 3 || len(c.diffs) > len(cands[0].diffs) {
			break
		}
		out = append(out, fmt.Sprintf("%s (differs: %s)", c.path, strings.Join(c.diffs, ", ")))
	}
	return out
}

// metas reads the baseline.json of the store's key folders that have a
// baseline (at most maxStoreKeys folders; an unreadable one is skipped:
// it only names candidates).
func (s Store) metas() []Meta {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil
	}
	var out []Meta
	for i, e := range entries {
		if i == maxStoreKeys {
			break
		}
		if !e.IsDir() || !fileExists(filepath.Join(s.Dir, e.Name(), BaselineFile)) {
			continue
		}
		f, err := os.Open(filepath.Join(s.Dir, e.Name(), MetaFile))
		if err != nil {
			continue
		}
		var m Meta
		err = json.NewDecoder(io.LimitReader(f, maxMetaBytes)).Decode(&m)
		f.Close()
		if err == nil && m.Key.Slug() == e.Name() {
			out = append(out, m)
		}
	}
	return out
}

// Diff names the fields in which other differs from k, as
// "field=K'S here, OTHER'S stored".
func (k Key) Diff(other Key) []string {
	fields := []struct{ name, a, b string }{
		{"runner", k.Runner, other.Runner}, {"gpu", k.GPU, other.GPU}, {"backend", k.Backend, other.Backend},
		{"image", k.Image, other.Image}, {"model", k.Model, other.Model}, {"size", k.Size, other.Size},
		{"profiles", k.Profiles, other.Profiles}, {"scenarios", k.Scenarios, other.Scenarios},
	}
	var out []string
	for _, f := range fields {
		if f.a != f.b {
			out = append(out, fmt.Sprintf("%s=%s here, %s stored", f.name, f.a, f.b))
		}
	}
	return out
}
