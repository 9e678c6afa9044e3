package history

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

const short = "profile=basic/scenario=ttft-tpot/prompt=short/conc=1"

func TestCheckFindsAStepWhereItStarts(t *testing.T) {
	// TPOT 6% slower and tok/s 6% lower from run 9 of 16, 1% noise; the
	// error rate stays 0 (constant: not tested).
	s := syntheticStore(t, 16, 3, map[string]map[string]step{short: {
		"tpot-p50-ns": {level: 2e7, noise: 0.01, size: 0.06, at: 9},
		"tok/s":       {level: 50, noise: 0.01, size: -0.06, at: 9},
		"err-%":       {level: 0},
	}}, nil, nil)
	rep, err := Check(grouped(t, s), DefaultCheck)
	require.NoError(t, err)
	assert.Equal(t, verdict.OutcomeFail, rep.Outcome())
	require.Len(t, rep.Keys, 1)
	k := rep.Keys[0]
	assert.Equal(t, 16, k.Runs)
	assert.Equal(t, 2, k.Tested, "tpot and tok/s")
	assert.Equal(t, 2, k.Constant, "err-% is 0 throughout, and the synthetic ns/op 1000")
	assert.Equal(t, 0, k.NotGated, "every unit has a direction without thresholds.yaml (ns/op: lower by default)")
	require.Len(t, rep.Changes, 2)
	for _, c := range rep.Changes {
		assert.Equal(t, 8, c.Run.Index, "%s: the change starts at run 9", c.Unit)
		assert.True(t, c.Regression, c.Unit)
		assert.InDelta(t, 6, math.Abs(c.ChangePct), 1.5, c.Unit)
		assert.Equal(t, 8, c.BeforeRuns)
		assert.Equal(t, 8, c.AfterRuns)
		assert.LessOrEqual(t, c.P, rep.Cutoff)
		assert.True(t, c.PBound, "a clear change stops once it certainly passes: P is a bound")
		assert.Equal(t, 400, c.Permutations, "20 exceedances / 400 permutations = 0.05, the cutoff k·α/m with k = m = 2")
		assert.Len(t, c.Around, 6, "3 runs before and 3 after")
		assert.True(t, c.Around[3].After)
		assert.False(t, c.Around[2].After)
	}
	assert.GreaterOrEqual(t, math.Abs(rep.Changes[0].ChangePct), math.Abs(rep.Changes[1].ChangePct), "largest first")
	assert.Equal(t, 999, rep.Options.Permutations, "automatic: 2·m/α − 1 = 79 with m = 2, at least 999")
}

func TestCheckUnchangedPasses(t *testing.T) {
	s := syntheticStore(t, 16, 3, map[string]map[string]step{short: {
		"tpot-p50-ns": {level: 2e7, noise: 0.02},
		"tok/s":       {level: 50, noise: 0.02},
	}}, nil, nil)
	rep, err := Check(grouped(t, s), DefaultCheck)
	require.NoError(t, err)
	assert.Empty(t, rep.Changes)
	assert.Equal(t, verdict.OutcomePass, rep.Outcome())
	assert.Contains(t, rep.Headline(), "PASS: no change point in 2 series")
}

func TestCheckImprovementPasses(t *testing.T) {
	s := syntheticStore(t, 16, 3, map[string]map[string]step{short: {
		"tpot-p50-ns": {level: 2e7, noise: 0.01, size: -0.08, at: 7},
	}}, nil, nil)
	rep, err := Check(grouped(t, s), DefaultCheck)
	require.NoError(t, err)
	require.Len(t, rep.Changes, 1)
	assert.False(t, rep.Changes[0].Regression)
	assert.Equal(t, "IMPROVEMENT", rep.Changes[0].Kind())
	assert.Equal(t, 6, rep.Changes[0].Run.Index)
	assert.Equal(t, verdict.OutcomePass, rep.Outcome(), "an improvement is reported, not failed")
}

func TestCheckMinChange(t *testing.T) {
	// A 1% step with 0.1% noise: significant, but under the 2% minimum.
	s := syntheticStore(t, 16, 1, map[string]map[string]step{short: {
		"tpot-p50-ns": {level: 2e7, noise: 0.001, size: 0.01, at: 9},
	}}, nil, nil)
	khs := grouped(t, s)
	rep, err := Check(khs, DefaultCheck)
	require.NoError(t, err)
	assert.Empty(t, rep.Changes, "under --min-change")
	assert.Positive(t, rep.Cutoff, "the split itself was significant")
	o := DefaultCheck
	o.MinChange = 0.005
	rep, err = Check(khs, o)
	require.NoError(t, err)
	require.Len(t, rep.Changes, 1)
	assert.Equal(t, 8, rep.Changes[0].Run.Index)
}

func TestCheckTwoStepsAndEvents(t *testing.T) {
	// +8% at run 7 with a new image, −8% back at run 15 noted by hand.
	s := syntheticStore(t, 20, 2, map[string]map[string]step{short: {"tpot-p50-ns": {level: 2e7, noise: 0.01, size: 0.08, at: 7}}},
		func(run int, cfg map[string]string) {
			if run >= 7 {
				cfg["image"], cfg["vllm-version"] = "vllm/vllm-openai:v0.11.0", "0.11.0"
			}
			if run >= 15 {
				cfg["image"] = "vllm/vllm-openai:v0.11.1"
			}
		}, map[int][]string{15: {"revert of the scheduler change"}})
	khs := grouped(t, s)
	require.Len(t, khs, 1, "an image change stays in the key's series")
	kh := khs[0]
	var texts []string
	for _, e := range kh.Events {
		texts = append(texts, e.Text)
	}
	assert.Equal(t, []string{
		"image in-process → vllm/vllm-openai:v0.11.0", "vllm-version 0.11.0-sim → 0.11.0",
		"revert of the scheduler change", "image vllm/vllm-openai:v0.11.0 → vllm/vllm-openai:v0.11.1",
	}, texts)
	// The step back down (runs 15–20 at the old level, by hand).
	for _, s := range kh.Series {
		if s.Unit != "tpot-p50-ns" {
			continue
		}
		for i := range s.Points {
			if s.Points[i].Run >= 14 {
				s.Points[i].Median /= 1.08
			}
		}
	}
	rep, err := Check(khs, DefaultCheck)
	require.NoError(t, err)
	require.Len(t, rep.Changes, 2)
	byRun := map[int]Change{}
	for _, c := range rep.Changes {
		byRun[c.Run.Index] = c
	}
	up, down := byRun[6], byRun[14]
	assert.True(t, up.Regression)
	assert.False(t, down.Regression)
	assert.Len(t, up.Events, 2, "the image and the version changed at run 7")
	assert.Contains(t, up.EventText(), "run 7: image in-process → vllm/vllm-openai:v0.11.0")
	assert.Contains(t, down.EventText(), "revert of the scheduler change")
	assert.Equal(t, 8, up.AfterRuns, "the segment between the two changes")
	assert.Equal(t, 8, down.BeforeRuns)
}

func TestCheckBaselineEvent(t *testing.T) {
	dir := t.TempDir()
	base := dir + "/gpu.txt"
	s, err := Init(dir + "/store")
	require.NoError(t, err)
	for i, content := range []string{"a", "a", "b"} {
		require.NoError(t, writeFile(base, content))
		_, err := s.Add(resultsDir(t, benchText(simConfig(), oneRun(2e7+float64(i))), nil, testDate(i)), AddOptions{Commit: "c", Date: testDate(i), Baseline: base})
		require.NoError(t, err)
	}
	kh := grouped(t, s)[0]
	require.Len(t, kh.Events, 1)
	assert.Equal(t, Event{Run: 2, RunID: kh.Runs[2].ID, Kind: EventBaseline, Text: "re-baseline: " + base + " changed"}, kh.Events[0])
}

func TestCheckInconclusiveWithFewRuns(t *testing.T) {
	s := syntheticStore(t, 5, 1, map[string]map[string]step{short: {"tpot-p50-ns": {level: 2e7, noise: 0.01}}}, nil, nil)
	rep, err := Check(grouped(t, s), DefaultCheck)
	require.NoError(t, err)
	assert.Equal(t, verdict.OutcomeInconclusive, rep.Outcome())
	assert.Equal(t, 2, rep.Keys[0].Short, "tpot-p50-ns and ns/op")
	assert.Contains(t, rep.Headline(), "a series needs 6 runs (2 × --min-size 3)")
}

func TestCheckDirectionsAsTheGateReadsThem(t *testing.T) {
	s := syntheticStore(t, 8, 1, map[string]map[string]step{short: {"tpot-p50-ns": {level: 2e7, noise: 0.01}, "kv-peak-%": {level: 30, noise: 0.1}}}, nil, nil)
	runs, err := s.Runs()
	require.NoError(t, err)
	set, err := thresholds.Parse("t.yaml", []byte("better:\n  ns/op: none\n  kv-peak-%: higher\n  tpot-p50-ns: higher\n"))
	require.NoError(t, err)
	khs, err := Group(runs, Filter{}, set)
	require.NoError(t, err)
	dirs := map[string]string{}
	for _, s := range khs[0].Series {
		dirs[s.Unit] = s.Direction.String() + " (" + s.DirectionFrom + ")"
	}
	assert.Equal(t, map[string]string{
		"ns/op":       "none (thresholds)",
		"kv-peak-%":   "higher (thresholds)",
		"tpot-p50-ns": "lower (Unit line)", // the file's Unit line wins over thresholds.yaml, as in the gate
	}, dirs)
}

func TestCheckOptionsRefused(t *testing.T) {
	for _, tc := range []struct {
		o    func(*CheckOptions)
		want string
	}{
		{func(o *CheckOptions) { o.Alpha = 0 }, "Alpha 0"},
		{func(o *CheckOptions) { o.MinChange = -0.1 }, "MinChange"},
		{func(o *CheckOptions) { o.MinSize = 1 }, "MinSize 1"},
		{func(o *CheckOptions) { o.Permutations = -5 }, "Permutations -5"},
	} {
		o := DefaultCheck
		tc.o(&o)
		_, err := Check(nil, o)
		require.ErrorIs(t, err, ErrBadInput)
		assert.Contains(t, err.Error(), tc.want)
	}
}

func TestReportFormats(t *testing.T) {
	s := syntheticStore(t, 16, 3, map[string]map[string]step{short: {"tpot-p50-ns": {level: 2e7, noise: 0.01, size: 0.06, at: 9}}}, nil, map[int][]string{9: {"new scheduler"}})
	rep, err := Check(grouped(t, s), DefaultCheck)
	require.NoError(t, err)
	require.Len(t, rep.Changes, 1)

	var text bytes.Buffer
	require.NoError(t, verdict.WriteAs(&text, "text", rep.Formats()))
	out := text.String()
	for _, want := range []string{"E-divisive means", "Benjamini-Hochberg at 5% over 1 series", "event at run 9", "new scheduler",
		"REGRESSION", "tpot-p50-ns", "Perf/" + short, "ms → ", "(8 | 8 runs)", "\nFAIL: 1 change point in 1 series, 1 regression"} {
		assert.Contains(t, out, want)
	}

	var md bytes.Buffer
	require.NoError(t, verdict.WriteAs(&md, "markdown", rep.Formats()))
	assert.Contains(t, md.String(), "> [!WARNING]")
	assert.Contains(t, md.String(), "<details><summary>Runs around the change of tpot-p50-ns")
	assert.Equal(t, 6, strings.Count(md.String(), "| `2026"), "six runs around the change, with their dates")
	assert.Contains(t, md.String(), "← change")

	var js bytes.Buffer
	require.NoError(t, verdict.WriteAs(&js, "json", rep.Formats()))
	var got struct {
		Outcome string
		Changes []struct {
			Kind   string
			Run    struct{ Run int }
			Around []struct {
				Run   int
				Value *float64
			}
			Events []struct{ Run int }
		}
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &got))
	assert.Equal(t, "FAIL", got.Outcome)
	require.Len(t, got.Changes, 1)
	assert.Equal(t, 9, got.Changes[0].Run.Run, "runs count from 1 in JSON too")
	assert.Equal(t, 6, got.Changes[0].Around[0].Run)
	assert.NotNil(t, got.Changes[0].Around[0].Value)
	assert.Equal(t, 9, got.Changes[0].Events[0].Run)

	assert.Equal(t, []string{"text", "markdown", "json"}, CheckFormats)
}
