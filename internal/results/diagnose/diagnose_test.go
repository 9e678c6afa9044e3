package diagnose_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/fixtures"
	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/results/diagnose"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// simRun is a suite run against the in-process simulator: one profile
// with extra simulator arguments, some points of one scenario.
type simRun struct {
	profile  string
	simArgs  []string
	scenario string
	// points are the point keys to run, in order (all when empty).
	points []string
	// maxTokens replaces the points' max_tokens (0 keeps them).
	maxTokens int
	// longPrompt repeats the long prompt fixture this many times (0: the
	// scenario's prompts).
	longPrompt int
}

func (r simRun) key() string {
	return fmt.Sprintf("%s|%q|%s|%q|%d|%d", r.profile, r.simArgs, r.scenario, r.points, r.maxTokens, r.longPrompt)
}

// runs caches the diagnoses of simRuns: rows that need the same run share
// it.
var runs = struct {
	sync.Mutex
	m map[string]*diagnosed
}{m: map[string]*diagnosed{}}

type diagnosed struct {
	once sync.Once
	dir  string
	d    *diagnose.Diagnosis
	err  error
}

// diagnoseRun runs r once per test binary and diagnoses its results folder.
func diagnoseRun(t *testing.T, r simRun) (*diagnose.Diagnosis, string) {
	t.Helper()
	runs.Lock()
	e := runs.m[r.key()]
	if e == nil {
		e = &diagnosed{}
		runs.m[r.key()] = e
	}
	runs.Unlock()
	e.once.Do(func() { e.dir, e.err = execute(r); e.d, e.err = diagnoseDir(e.dir, e.err) })
	require.NoError(t, e.err)
	return e.d, e.dir
}

func diagnoseDir(dir string, err error) (*diagnose.Diagnosis, error) {
	if err != nil {
		return nil, err
	}
	return diagnose.Folder(dir)
}

// execute runs r with the suite into a fresh results folder.
func execute(r simRun) (string, error) {
	dir, err := os.MkdirTemp("", "diagnose-*")
	if err != nil {
		return "", err
	}
	cleanups = append(cleanups, dir)
	s, err := suite.New(suite.Config{Size: scenario.Quick, Profiles: []string{r.profile}, Scenarios: []string{r.scenario},
		ResultsDir: dir, SimArgs: r.simArgs})
	if err != nil {
		return "", err
	}
	ctx := context.Background()
	ss, err := s.Start(ctx, r.profile)
	if err != nil {
		return "", err
	}
	defer ss.Close(context.WithoutCancel(ctx))
	pts, err := ss.Points(r.scenario)
	if err != nil {
		return "", err
	}
	for _, pt := range pts {
		if len(r.points) > 0 && !slices.Contains(r.points, pt.Key) {
			continue
		}
		pt.Classes = slices.Clone(pt.Classes)
		for i := range pt.Classes {
			if r.maxTokens > 0 {
				pt.Classes[i].Config.MaxTokens = r.maxTokens
			}
			if r.longPrompt > 0 {
				long, err := fixtures.Prompt("long")
				if err != nil {
					return "", err
				}
				pt.Classes[i].Config.Body = strings.TrimSpace(strings.Repeat(long+" ", r.longPrompt))
				pt.Classes[i].Config.PromptTokens = 0
			}
		}
		if _, err := ss.Run(ctx, pt); err != nil {
			return "", err
		}
	}
	return dir, s.Close()
}

var cleanups []string

func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range cleanups {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// healthy is a run with nothing wrong: the default basic profile with no
// cold start, below its knee. Its steps are 5 times longer
// (--sim-slowdown 5): the gaps between chunks are timed by a client on the
// test's machine, and with ~20 ms steps a busy machine's scheduling
// stalls alone made them stutter (a fresh-clone CI, the race detector's
// run beside it: gap CV 0.49 at 8 streams; 8 busy loops beside it: 0.70,
// against tpot-jitter's 0.35). With 100 ms steps it stays quiet beside 16
// busy loops.
var healthy = simRun{profile: "basic", simArgs: []string{"--sim-cold-start", "0", "--sim-slowdown", "5"}, scenario: "concurrency-sweep", points: []string{"conc=1", "conc=8"}}

// TestRulesFire runs the simulator in a configuration that causes each
// rule's condition and finds the rule fired with its evidence; a healthy
// run keeps every rule quiet. Its simulators run in real time for about a
// minute (80 s under -race), so make test runs it in the alone phase,
// without -race, in the suite lane beside TestPerf.
func TestRulesFire(t *testing.T) {
	testphase.Alone(t)
	testphase.Lane(t, testphase.LaneSuite)
	for _, tc := range []struct {
		name string
		rule string
		run  simRun
		// evidence are substrings of the fired hit's evidence.
		evidence []string
	}{
		// --max-num-seqs 2 at concurrency 8: six requests queue for their
		// first token.
		{"queue", diagnose.HighTTFT, simRun{profile: "basic", simArgs: []string{"--max-num-seqs", "2"}, scenario: "concurrency-sweep", points: []string{"conc=8"}},
			[]string{"decode steps", "waiting queue non-empty"}},
		// Prompts of 12,000 tokens, one at a time: the prefill alone takes
		// many decode steps.
		{"long prompts", diagnose.HighTTFT, simRun{profile: "basic", simArgs: []string{"--max-model-len", "32768"}, scenario: "ttft-tpot", points: []string{"prompt=long/conc=1"}, longPrompt: 8},
			[]string{"decode steps", "prompts average"}},
		// A 321-block KV cache and 96-token outputs at concurrency 16: the
		// running requests outgrow the cache and are preempted.
		{"preemptions", diagnose.TPOTJitter, simRun{profile: "basic", simArgs: []string{"--gpu-memory-utilization", "0.115"}, scenario: "concurrency-sweep", points: []string{"conc=16"}, maxTokens: 96},
			[]string{"vary: CV", "preemptions: Δnum_preemptions_total"}},
		// The speculative profile (ngram, 5 drafts, the simulator's 70%
		// acceptance per position) with 12-token outputs: how many tokens a
		// step emits varies, and short requests' TPOT with it.
		{"speculative", diagnose.TPOTJitter, simRun{profile: "speculative", scenario: "concurrency-sweep", points: []string{"conc=16"}, maxTokens: 12},
			[]string{"per-request TPOT varies", "speculative decoding:"}},
		// The same cache at concurrency 32 with short outputs: full.
		{"kv full", diagnose.KVPressure, simRun{profile: "basic", simArgs: []string{"--gpu-memory-utilization", "0.115"}, scenario: "concurrency-sweep", points: []string{"conc=32"}},
			[]string{"KV-cache usage peaked at", "check kv_peak FAIL"}},
		// --max-num-seqs 2 at concurrency 8 with an empty cache.
		{"max-num-seqs 2", diagnose.SmallBatch, simRun{profile: "basic", simArgs: []string{"--max-num-seqs", "2"}, scenario: "concurrency-sweep", points: []string{"conc=8"}},
			[]string{"running batch peaked at 2 of 8", "KV-cache usage peaked at"}},
		// A 500 ms CUDA warm-up on the engine's first step.
		{"cold start", diagnose.ColdStart, simRun{profile: "basic", simArgs: []string{"--sim-cold-start", "500ms"}, scenario: "concurrency-sweep", points: []string{"conc=1"}},
			[]string{"first request after start", "the engine's first step was slow"}},
	} {
		t.Run(tc.rule+"/"+tc.name, func(t *testing.T) {
			d, dir := diagnoseRun(t, tc.run)
			f, ok := d.Finding(tc.rule)
			require.True(t, ok, "%s did not fire on %s: %s", tc.rule, dir, d)
			require.NotEmpty(t, f.Hits)
			ev := strings.Join(f.Hits[0].Evidence, "\n")
			for _, want := range tc.evidence {
				assert.Contains(t, ev, want)
			}
			if testing.Verbose() {
				for _, h := range f.Hits {
					t.Logf("%s on %s:\n  %s", tc.rule, h.Run, strings.Join(h.Evidence, "\n  "))
				}
			}
		})
	}
	d, dir := diagnoseRun(t, healthy)
	// Suite.Close rendered the folder's reports.
	for _, f := range []string{"report.html", "report.md"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	rules, err := diagnose.Rules()
	require.NoError(t, err)
	for _, rule := range rules {
		t.Run(rule.ID+"/healthy", func(t *testing.T) {
			f, fired := d.Finding(rule.ID)
			assert.False(t, fired, "%s fired on the healthy run %s: %v", rule.ID, dir, f.Hits)
		})
	}
}

// TestRuleWithoutMetric: a server that does not expose a metric a rule
// needs leaves the rule unchecked, saying what was missing; it is never
// counted as quiet.
func TestRuleWithoutMetric(t *testing.T) {
	d, dir := diagnoseRun(t, simRun{profile: "basic", simArgs: []string{"--sim-cold-start", "0", "--sim-fault-drop-metric", "vllm:kv_cache_usage_perc"},
		scenario: "concurrency-sweep", points: []string{"conc=1", "conc=8"}})
	for _, tc := range []struct {
		rule    string
		missing string
	}{
		// The KV rule reads nothing but kv_cache_usage_perc.
		{diagnose.KVPressure, "kv_cache_usage_perc during the load"},
		// The small-batch rule needs the KV usage to say the cache is free.
		{diagnose.SmallBatch, "kv_cache_usage_perc during the load"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			var found *diagnose.Checked
			for i, u := range d.Unchecked {
				if u.Rule.ID == tc.rule {
					found = &d.Unchecked[i]
				}
			}
			require.NotNil(t, found, "%s is not among the unchecked rules of %s: %s", tc.rule, dir, d)
			assert.Zero(t, found.Judged)
			assert.Contains(t, found.NotJudged(), tc.missing)
			assert.Contains(t, d.String(), "not checked for lack of data: ")
		})
	}
}
