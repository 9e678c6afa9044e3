package engine

import (
	"math"
	"testing"
	"time"
)

// runPoint measures one closed-loop run of 8 concurrent requests on the
// default preset with cfg changed by mod.
func runPoint(t *testing.T, mod func(*Config)) (thr float64, p50tpot time.Duration, tpots []time.Duration) {
	t.Helper()
	cfg := defaultCfg()
	mod(&cfg)
	s := newSim(t, cfg, nil)
	dur := closedLoop(s, 8, 3, func(c, k int) Request {
		return Request{PromptTokens: prompt(100, c*1000+k*31+7), MaxTokens: 64, IgnoreEOS: true}
	})
	tokens := 0
	for _, r := range s.recs {
		tokens += r.tokens
		tpots = append(tpots, r.tpot())
	}
	return float64(tokens) / dur.Seconds(), pct(tpots, 50), tpots
}

// TestSlowdown: --sim-slowdown 1.10 makes every step 10% slower, so a
// regression gate has a known 10% regression to find.
func TestSlowdown(t *testing.T) {
	t.Parallel()
	baseThr, baseTPOT, _ := runPoint(t, func(c *Config) {})
	slowThr, slowTPOT, _ := runPoint(t, func(c *Config) { c.Slowdown = 1.10 })
	if r := float64(slowTPOT) / float64(baseTPOT); math.Abs(r-1.10) > 0.005 {
		t.Errorf("P50 TPOT ratio with slowdown 1.10 = %.4f, want 1.10", r)
	}
	if r := baseThr / slowThr; math.Abs(r-1.10) > 0.01 {
		t.Errorf("throughput ratio base/slow = %.4f, want 1.10", r)
	}
}

// TestJitter: --sim-jitter adds seeded noise: the same seed gives the same
// run, another seed another run, and the spread grows with the jitter.
func TestJitter(t *testing.T) {
	t.Parallel()
	spread := func(v []time.Duration) float64 {
		lo, hi := v[0], v[0]
		for _, d := range v {
			lo, hi = min(lo, d), max(hi, d)
		}
		return float64(hi-lo) / float64(pct(v, 50))
	}
	_, _, none := runPoint(t, func(c *Config) {})
	_, a1, jitA := runPoint(t, func(c *Config) { c.Jitter = 0.05; c.Seed = 1 })
	_, a2, _ := runPoint(t, func(c *Config) { c.Jitter = 0.05; c.Seed = 1 })
	_, b, _ := runPoint(t, func(c *Config) { c.Jitter = 0.05; c.Seed = 2 })
	if a1 != a2 {
		t.Errorf("same seed, different P50 TPOT: %v vs %v (want a reproducible run)", a1, a2)
	}
	if a1 == b {
		t.Errorf("seeds 1 and 2 gave the same P50 TPOT %v: the seed does not reach the noise", a1)
	}
	if s0, s1 := spread(none), spread(jitA); s1 <= s0 {
		t.Errorf("TPOT spread with jitter 0.05 = %.4f, without = %.4f: want more spread with jitter", s1, s0)
	}
}

// TestDefaultNoiseSpread: vllm-sim's default jitter spreads latencies as a
// real server's are spread (P99 above P50 for TTFT, TPOT and ITL at
// moderate load), and --sim-jitter 0 leaves only what batch composition
// makes.
func TestDefaultNoiseSpread(t *testing.T) {
	spread := func(jitter float64) (ttft, tpot, itl float64) {
		cfg := defaultCfg()
		cfg.Jitter = jitter
		s := newSim(t, cfg, nil)
		closedLoop(s, 8, 6, func(c, k int) Request {
			return Request{PromptTokens: prompt(120, c*1000+k*37+1), MaxTokens: 150, IgnoreEOS: true}
		})
		var tt, tp, it []time.Duration
		for _, r := range s.recs[8:] { // after the first wave
			tt, tp = append(tt, r.ttft()), append(tp, r.tpot())
			it = append(it, r.itls...)
		}
		ratio := func(d []time.Duration) float64 { return float64(pct(d, 99)) / float64(pct(d, 50)) }
		return ratio(tt), ratio(tp), ratio(it)
	}
	ttft, tpot, itl := spread(DefaultJitter)
	t.Logf("P99/P50 with jitter %.2f: TTFT %.3f, TPOT %.3f, ITL %.3f", DefaultJitter, ttft, tpot, itl)
	if ttft <= 1.02 || tpot <= 1.005 || itl <= 1.05 {
		t.Errorf("P99/P50 TTFT %.3f, TPOT %.3f, ITL %.3f: want a spread with the default jitter", ttft, tpot, itl)
	}
	// Without jitter only batch composition spreads them: new requests'
	// prefills lengthen a step now and then.
	if _, tpot0, itl0 := spread(0); tpot0 > 1.001 || itl0 > 1.01 {
		t.Errorf("jitter 0: P99/P50 TPOT %.4f, ITL %.4f, want ≈ 1", tpot0, itl0)
	}
}
