package upgrade

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/profile"
)

// fakeStarter stands in for the servers: each side's runs report
// ttft-p50-ns and tok/s around a side's level with 1% noise, and every
// start, run and stop is recorded.
type fakeStarter struct {
	level  [2]float64 // multiplies the latency, divides the throughput
	gpu    [2]string
	failOn string // "new": NEW's first run fails
	rng    *rand.Rand
	events []string
	up     int
	maxUp  int
}

func newFake(oldLevel, newLevel float64) *fakeStarter {
	return &fakeStarter{level: [2]float64{oldLevel, newLevel}, gpu: [2]string{"sim:rtx4090", "sim:rtx4090"}, rng: rand.New(rand.NewPCG(1, 2))}
}

func (f *fakeStarter) start(_ context.Context, side int, profile string) (session, error) {
	f.events = append(f.events, "start "+sideNames[side]+" "+profile)
	f.up++
	f.maxUp = max(f.maxUp, f.up)
	return &fakeSession{f: f, side: side, profile: profile}, nil
}

type fakeSession struct {
	f       *fakeStarter
	side    int
	profile string
	closed  bool
}

func (s *fakeSession) run(_ context.Context, p scenario.Point) (*suite.Run, error) {
	f := s.f
	name := "profile=" + s.profile + "/scenario=" + p.Scenario.Name + "/" + p.Key
	f.events = append(f.events, "run "+sideNames[s.side]+" "+name)
	if f.failOn == sideNames[s.side] {
		return nil, errors.New("connection refused")
	}
	noise := 1 + 0.01*f.rng.NormFloat64()
	return &suite.Run{Name: name, Metrics: map[string]float64{
		"ttft-p50-ns": 40e6 * f.level[s.side] * noise,
		"tok/s":       300 / f.level[s.side] * noise,
	}}, nil
}

func (s *fakeSession) configLines() [][2]string {
	return [][2]string{{"backend", "sim"}, {"gpu", s.f.gpu[s.side]}, {"model", "Qwen/Qwen3-0.6B"}, {"image", sideNames[s.side] + ":tag"}}
}

func (s *fakeSession) close(context.Context) error {
	if s.closed {
		return errors.New("closed twice")
	}
	s.closed = true
	s.f.up--
	s.f.events = append(s.f.events, "stop "+sideNames[s.side]+" "+s.profile)
	return nil
}

// fakeConfig is a gate over two points of the basic profile on f.
func fakeConfig(t *testing.T, f *fakeStarter) Config {
	return Config{
		Suite:   suite.Config{Size: scenario.Quick},
		Old:     Side{Image: InProcess},
		New:     Side{Image: InProcess},
		Points:  []string{"profile=basic/scenario=poisson/rate=4", "profile=basic/scenario=concurrency-sweep/conc=8"},
		Dir:     t.TempDir(),
		starter: f,
	}
}

func pairsOf(r *Result) []int {
	var out []int
	for _, rd := range r.Rounds {
		out = append(out, rd.Pairs)
	}
	return out
}

// TestRunDecides checks the adaptive loop's decisions on made-up runs.
func TestRunDecides(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		newLevel      float64
		min, max      int
		want          gate.Decision
		wantPairs     []int
		wantRegressed string // a unit REGRESSION must name
	}{
		// 20% slower: too few pairs at 3 (min_samples 6), DIFFERENT at 6.
		{"slower", 1.2, 3, 10, gate.Different, []int{3, 6}, "ttft-p50-ns"},
		// The same server twice: SAME as soon as the intervals allow.
		{"same", 1, 6, 10, gate.Same, []int{6}, ""},
		// The cap is reached before anything can be decided: UNKNOWN.
		{"capped", 1.2, 2, 4, gate.Unknown, []int{2, 4}, ""},
		// 20% faster is not a regression.
		{"faster", 1 / 1.2, 6, 10, gate.Same, []int{6}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(1, tc.newLevel)
			cfg := fakeConfig(t, f)
			cfg.MinPairs, cfg.MaxPairs = tc.min, tc.max
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Decision(); got != tc.want {
				t.Errorf("decision %s, want %s: %s", got, tc.want, res.Headline())
			}
			if got := pairsOf(res); !slices.Equal(got, tc.wantPairs) {
				t.Errorf("rounds at %v pairs, want %v", got, tc.wantPairs)
			}
			if tc.wantRegressed != "" {
				var units []string
				for _, row := range res.Report.Rows {
					if row.Verdict == gate.Regression {
						units = append(units, row.Unit)
					}
				}
				if !slices.Contains(units, tc.wantRegressed) {
					t.Errorf("regressions in %v, want %s among them", units, tc.wantRegressed)
				}
			}
			if f.up != 0 {
				t.Errorf("%d servers left running", f.up)
			}
		})
	}
}

// TestRunOrderAndServers checks the interleaving (A B, B A, …) and how
// many servers each lifecycle starts and keeps up.
func TestRunOrderAndServers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		servers    Servers
		wantStarts int
		wantMaxUp  int
	}{
		// One server at a time; consecutive blocks of a side share one: 4 pairs, 5 starts.
		{"restart", Restart, 5, 1},
		// Both up for the whole gate.
		{"keep", Keep, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(1, 1.2)
			cfg := fakeConfig(t, f)
			cfg.MinPairs, cfg.MaxPairs, cfg.Servers = 4, 4, tc.servers
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Starts != tc.wantStarts || f.maxUp != tc.wantMaxUp {
				t.Errorf("%d starts, at most %d up; want %d and %d\n%s", res.Starts, f.maxUp, tc.wantStarts, tc.wantMaxUp, strings.Join(f.events, "\n"))
			}
			var sides []string
			for _, e := range f.events {
				if side, ok := strings.CutPrefix(e, "run "); ok && strings.Contains(side, "conc=8") {
					sides = append(sides, strings.Fields(side)[0])
				}
			}
			if want := []string{"old", "new", "new", "old", "old", "new", "new", "old"}; !slices.Equal(sides, want) {
				t.Errorf("run order %v, want %v", sides, want)
			}
			if f.up != 0 {
				t.Errorf("%d servers left running", f.up)
			}
		})
	}
}

// TestRunFiles checks that the bench files hold every run with its
// server's configuration, and that `vllmperf gate` reads them.
func TestRunFiles(t *testing.T) {
	t.Parallel()
	f := newFake(1, 1)
	cfg := fakeConfig(t, f)
	cfg.MinPairs, cfg.MaxPairs = 6, 6
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{res.OldFile, res.NewFile} {
		in, err := input.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(in.Results), 12; got != want {
			t.Errorf("%s: %d results, want %d (6 pairs × 2 points)", file, got, want)
		}
		if got := in.Results[0].GetConfig("gpu"); got != "sim:rtx4090" {
			t.Errorf("%s: gpu %q, want sim:rtx4090", file, got)
		}
		if in.Units.Get("tok/s", "better") == nil {
			t.Errorf("%s has no Unit line for tok/s", file)
		}
	}
	data, err := os.ReadFile(res.NewFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := "BenchmarkPerf/profile=basic/scenario=poisson/rate=4" + procSuffix() + " 1 "; !strings.Contains(string(data), want) {
		t.Errorf("%s lacks %q:\n%s", res.NewFile, want, data)
	}
}

// TestRunErrors checks what stops the gate before a decision.
func TestRunErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		change  func(*Config, *fakeStarter)
		wantErr string
		is      error
	}{
		// A server on another GPU cannot be compared.
		{"other gpu", func(_ *Config, f *fakeStarter) { f.gpu[newSide] = "sim:h100" }, `gpu is "sim:rtx4090" in`, nil},
		// A run that fails stops the gate and says where.
		{"run fails", func(_ *Config, f *fakeStarter) { f.failOn = "new" }, "pair 1, NEW, profile=basic/scenario=concurrency-sweep/conc=8: connection refused", nil},
		// A folder of an earlier gate is not reused.
		{"used folder", func(c *Config, _ *fakeStarter) { os.WriteFile(filepath.Join(c.Dir, OldFile), nil, 0o644) }, "already holds old.txt", ErrSettings},
		// The cap under the start.
		{"pairs", func(c *Config, _ *fakeStarter) { c.MinPairs, c.MaxPairs = 8, 4 }, "max pairs 4 is below min pairs 8", ErrSettings},
		{"no pairs", func(c *Config, _ *fakeStarter) { c.MinPairs = -1 }, "min pairs -1: want at least 1", ErrSettings},
		// An unknown lifecycle.
		{"servers", func(c *Config, _ *fakeStarter) { c.Servers = "both" }, `servers "both": want restart`, ErrSettings},
		// Two containers up together would share the GPUs.
		{"keep containers", func(c *Config, _ *fakeStarter) {
			c.Servers, c.Old, c.New = Keep, Side{Image: "sim"}, Side{Image: "sim"}
		}, "one server per GPU set runs at a time", ErrSettings},
		// A point that does not exist.
		{"point", func(c *Config, _ *fakeStarter) { c.Points = []string{"profile=basic/scenario=poison"} }, `point "profile=basic/scenario=poison" matches none`, ErrSettings},
		// Simulator arguments for a vLLM image.
		{"sim args on vllm", func(c *Config, _ *fakeStarter) {
			c.Old, c.New = Side{Image: "vllm/vllm-openai:v0.10.2"}, Side{Image: "vllm/vllm-openai:v0.11.0", SimArgs: []string{"--sim-slowdown", "1.1"}}
		}, "NEW's simulator arguments (--sim-slowdown 1.1) need a simulator", ErrSettings},
		// Two backends.
		{"two backends", func(c *Config, _ *fakeStarter) { c.New = Side{Image: "sim"} }, "OLD (in-process) runs on the sim backend and NEW (sim) on the container backend", ErrSettings},
		// No image.
		{"no image", func(c *Config, _ *fakeStarter) { c.Old = Side{} }, "OLD has no image", ErrSettings},
		// A vLLM flag among the simulator's.
		{"vllm flag", func(c *Config, _ *fakeStarter) { c.New.SimArgs = []string{"--max-num-seqs", "8"} }, `"--max-num-seqs" is not a --sim-* flag`, ErrSettings},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(1, 1)
			cfg := fakeConfig(t, f)
			cfg.MinPairs, cfg.MaxPairs = 6, 6
			tc.change(&cfg, f)
			_, err := Run(context.Background(), cfg)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v does not wrap %v", err, tc.is)
			}
			if f.up != 0 {
				t.Errorf("%d servers left running", f.up)
			}
		})
	}
}

// TestNextPairs checks the growth of the adaptive loop.
func TestNextPairs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		need, cur, cap, want int
	}{
		{6, 3, 20, 6},    // the estimate, when above the minimum growth
		{7, 6, 20, 9},    // at least half as many again
		{2, 2, 20, 4},    // and at least 2 more
		{45, 10, 20, 20}, // never past the cap
		{-1, 6, 20, 20},  // beyond estimate: straight to the cap
	} {
		if got := nextPairs(tc.need, tc.cur, tc.cap); got != tc.want {
			t.Errorf("nextPairs(%d, %d, %d) = %d, want %d", tc.need, tc.cur, tc.cap, got, tc.want)
		}
	}
}

// TestSelectPoints checks the point patterns.
func TestSelectPoints(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		patterns []string
		want     []string // names; nil when wantErr
		wantErr  string
	}{
		// The default set.
		{"defaults", DefaultPoints, DefaultPoints, ""},
		// A scenario selects all its points.
		{"scenario", []string{"profile=basic/scenario=ttft-tpot"}, []string{
			"profile=basic/scenario=ttft-tpot/prompt=short/conc=1",
			"profile=basic/scenario=ttft-tpot/prompt=medium/conc=1",
			"profile=basic/scenario=ttft-tpot/prompt=long/conc=1"}, ""},
		// Globs per element, in the suite's order whatever the patterns' order.
		{"glob", []string{"profile=low-latency/scenario=poisson/*", "profile=basic/scenario=concurrency-sweep/conc=[13]*"}, []string{
			"profile=basic/scenario=concurrency-sweep/conc=1",
			"profile=basic/scenario=concurrency-sweep/conc=16",
			"profile=basic/scenario=concurrency-sweep/conc=32",
			"profile=low-latency/scenario=poisson/rate=4"}, ""},
		// A pattern that matches nothing names the problem.
		{"nothing", []string{"profile=basic/scenario=concurrency-sweep/conc=7"}, nil, `point "profile=basic/scenario=concurrency-sweep/conc=7" matches none of the`},
		// A malformed glob.
		{"bad glob", []string{"profile=[basic"}, nil, `point pattern "profile=[basic": syntax error`},
		// No pattern at all.
		{"none", []string{}, nil, "no points"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := SelectPoints(Builtin(), scenario.Quick, tc.patterns)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrSettings) {
					t.Fatalf("error %v, want ErrSettings with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tg := range got {
				names = append(names, tg.Name)
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("got %v\nwant %v", names, tc.want)
			}
		})
	}
}

// TestParseServers checks the lifecycle names.
func TestParseServers(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Servers{"": Restart, "restart": Restart, "Keep": Keep} {
		if got, err := ParseServers(in); err != nil || got != want {
			t.Errorf("ParseServers(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseServers("both"); !errors.Is(err, ErrSettings) {
		t.Errorf("ParseServers(both): %v, want ErrSettings", err)
	}
}

// TestHeadline checks the one-line summary of the rounds.
func TestHeadline(t *testing.T) {
	t.Parallel()
	f := newFake(1, 1.2)
	cfg := fakeConfig(t, f)
	cfg.MinPairs = 3
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Headline(), "DIFFERENT after 6 pairs (3 → 6): FAIL: "; !strings.HasPrefix(got, want) {
		t.Errorf("headline %q, want it to start with %q", got, want)
	}
}

// TestSeedArgs checks that each simulator start gets its own seed unless
// one is set.
func TestSeedArgs(t *testing.T) {
	t.Parallel()
	withSeed := profile.Profile{SimExtraArgs: []string{"--sim-seed", "3"}}
	for _, tc := range []struct {
		name string
		p    profile.Profile
		args []string
		want []string
	}{
		// No seed anywhere: the start's number.
		{"none", profile.Profile{}, []string{"--sim-jitter", "0.05"}, []string{"--sim-seed", "7"}},
		// A seed in the arguments stands.
		{"args", profile.Profile{}, []string{"--sim-seed", "1"}, nil},
		{"args with =", profile.Profile{}, []string{"--sim-seed=1"}, nil},
		// A seed in the profile stands.
		{"profile", withSeed, nil, nil},
	} {
		if got := seedArgs(tc.p, tc.args, 7); !slices.Equal(got, tc.want) {
			t.Errorf("%s: seedArgs = %q, want %q", tc.name, got, tc.want)
		}
	}
}
