package upgrade

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/docfigures"
	"github.com/vllmperf/vllmperf/internal/harness/gate"
	"github.com/vllmperf/vllmperf/internal/harness/thresholds"
)

func TestTmpDiag(t *testing.T) {
	dir := os.Getenv("TMPDIAG_DIR")
	if dir == "" {
		t.Skip()
	}
	set, err := thresholds.Load(filepath.Join(docfigures.ModuleRoot(t), "thresholds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pools := readCommittedPools(t, dir)
	sh := shapeOf(t, set, pools)
	rng := rand.New(rand.NewPCG(7, 1))
	for _, cond := range []string{"aa", "slow5", "slow10"} {
		for _, g := range []string{"seq", "ab"} {
			eff := map[string][]float64{}
			ps := map[string][]float64{}
			fails := 0
			for range 40 {
				var old, nw *gate.Input
				if g == "seq" {
					bi, ni := rng.Perm(poolRuns)[:qualityCount], rng.Perm(poolRuns)[:qualityCount]
					old, nw = draw(pools.seq["base"], bi, sh, nil), draw(pools.seq["base"], ni, sh, func(string, int) *gate.Input { return pools.seq[cond] })
				} else {
					pi := rng.Perm(poolRuns)[:qualityCount]
					old = draw(pools.seq["base"], pi, sh, func(string, int) *gate.Input { return pools.ab[cond][oldSide] })
					nw = draw(pools.seq["base"], pi, sh, func(string, int) *gate.Input { return pools.ab[cond][newSide] })
				}
				rep := compare(t, set, old, nw)
				if rep.Outcome() == gate.OutcomeFail {
					fails++
				}
				for _, p := range rep.Profiles {
					if strings.Contains(p.Profile, "copy") {
						continue
					}
					eff[p.Profile] = append(eff[p.Profile], p.Effect*100)
					ps[p.Profile] = append(ps[p.Profile], p.PHolm)
				}
			}
			for prof := range eff {
				sort.Float64s(eff[prof])
				sort.Float64s(ps[prof])
				e, p := eff[prof], ps[prof]
				t.Logf("%-6s %-3s %-12s fails=%2d/40 effect q10/50/90 = %5.1f %5.1f %5.1f  pHolm q10/50/90 = %.2g %.2g %.2g", cond, g, prof, fails, e[4], e[20], e[36], p[4], p[20], p[36])
			}
		}
	}
}
