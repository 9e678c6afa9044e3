package docfigures

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// TestFiguresProfiles computes docs/suite.md's table of what the profiles
// change from the committed simulator baseline (baselines/sim.txt: the
// whole suite at quick size, 10 runs of every point; the medians).
func TestFiguresProfiles(t *testing.T) {
	t.Parallel()
	med := readMedians(t, filepath.Join(ModuleRoot(t), "baselines", "sim.txt"))
	var b strings.Builder
	b.WriteString("\n| profile | prefix-reuse: hit rate | sweep at 32: tok/s, running / waiting peak | long-prefill-mix, short requests: P99 TTFT / P99 ITL | KV blocks per GiB of cache | medium prompt: tokens per chunk, acceptance | TTFT cold / warm short, medium, long |\n")
	b.WriteString("| --- | --: | --: | --: | --: | --: | --: |\n")
	for _, p := range med.profiles {
		v := func(point, unit string) float64 { return med.get(p, point, unit) }
		ms := func(ns float64) string { return fmt.Sprintf("%.0f", ns/1e6) }
		accept := "–"
		if a := v("scenario=ttft-tpot/prompt=medium/conc=1", units.SpecAccept); !math.IsNaN(a) {
			accept = fmt.Sprintf("%.0f %%", a)
		}
		fmt.Fprintf(&b, "| %s | %.1f %% | %.1f, %.0f / %.0f | %.1f / %.1f ms | %.0f | %.1f, %s | %s / %s, %s, %s ms |\n", p,
			v("scenario=prefix-reuse/conc=8", units.PrefixHitPct),
			v("scenario=concurrency-sweep/conc=32", units.TokPerSec), v("scenario=concurrency-sweep/conc=32", units.RunningPeak), v("scenario=concurrency-sweep/conc=32", units.WaitingPeak),
			v("scenario=long-prefill-mix/conc=16", "short-"+units.TTFTP99)/1e6, v("scenario=long-prefill-mix/conc=16", "short-"+units.ITLP99)/1e6,
			v("scenario=startup", units.BlocksPerGiB),
			v("scenario=ttft-tpot/prompt=medium/conc=1", units.TokPerChunk), accept,
			ms(v("scenario=startup", units.ColdTTFT)), ms(v("scenario=ttft-tpot/prompt=short/conc=1", units.TTFTP50)),
			ms(v("scenario=ttft-tpot/prompt=medium/conc=1", units.TTFTP50)), ms(v("scenario=ttft-tpot/prompt=long/conc=1", units.TTFTP50)))
	}
	Sync(t, "docs/suite.md", "profiles", b.String())
}

// medians are the median of every (benchmark, unit) of a bench file.
type medians struct {
	profiles []string
	values   map[string][]float64 // "profile=P/scenario=…|unit"
}

func (m medians) get(profile, point, unit string) float64 {
	vs := m.values["profile="+profile+"/"+point+"|"+unit]
	if len(vs) == 0 {
		return math.NaN()
	}
	slices.Sort(vs)
	if n := len(vs); n%2 == 0 {
		return (vs[n/2-1] + vs[n/2]) / 2
	}
	return vs[len(vs)/2]
}

func readMedians(t *testing.T, file string) medians {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := medians{values: map[string][]float64{}}
	r := benchfmt.NewReader(f, file)
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		full := string(res.Name)
		if i := strings.LastIndex(full, "-"); i > 0 && !strings.Contains(full[i:], "/") {
			full = full[:i] // the -N GOMAXPROCS suffix
		}
		name, err := benchname.Parse(benchname.Short(full))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if !slices.Contains(m.profiles, name.Profile) {
			m.profiles = append(m.profiles, name.Profile)
		}
		for _, v := range res.Values {
			unit, value := input.AsWritten(v)
			key := benchname.Short(full) + "|" + unit
			m.values[key] = append(m.values[key], value)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}
