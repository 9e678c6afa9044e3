package report

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// TraceLink is a profiler trace beside the results folder: vllmperf run's
// or the suite's (VLLMPERF_TORCH_PROFILE: traces/ in the folder), or the
// upgrade gate's for the regressed points (traces/old, traces/new next to
// the sides' folders old/ and new/).
type TraceLink struct {
	// Name is the file's name; Href its address relative to the report.
	Name, Href string
}

// traceSuffix ends a torch profiler trace (then .gz unless gzip is off).
const traceSuffix = ".pt.trace.json"

// findTraces lists the traces that belong to the results folder dir, in
// name order.
func findTraces(dir string) []TraceLink {
	var out []TraceLink
	for _, rel := range []string{"traces", filepath.Join("..", "traces", filepath.Base(dir))} {
		entries, err := os.ReadDir(filepath.Join(dir, rel))
		if err != nil {
			continue
		}
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() || !(strings.HasSuffix(n, traceSuffix) || strings.HasSuffix(n, traceSuffix+".gz")) {
				continue
			}
			out = append(out, TraceLink{Name: n, Href: filepath.ToSlash(filepath.Join(rel, n))})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
