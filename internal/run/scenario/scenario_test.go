package scenario

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestBuiltins: the built-in scenarios are the files of
// scenarios/workloads, in their run_order, and each is valid at each size.
func TestBuiltins(t *testing.T) {
	t.Parallel()
	names := Names()
	entries, err := os.ReadDir(filepath.Join("..", "..", "..", "scenarios", "workloads"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			files = append(files, n)
		}
	}
	if got := slices.Sorted(slices.Values(names)); !slices.Equal(got, files) {
		t.Fatalf("Names() = %v, want the files of scenarios/workloads: %v", names, files)
	}
	// The seed's two experiments run first, as their files say.
	if len(names) < 2 || names[0] != "ttft-tpot" || names[1] != "concurrency-sweep" {
		t.Errorf("Names() = %v: want ttft-tpot (run_order 1) and concurrency-sweep (run_order 2) first", names)
	}
	place := func(s *Scenario) string {
		order := math.MaxInt
		if s.RunOrder > 0 {
			order = s.RunOrder
		}
		return fmt.Sprintf("%020d %s", order, s.Name)
	}
	var prev *Scenario
	for _, n := range names {
		s, err := Builtin(n)
		if err != nil {
			t.Fatal(err)
		}
		if s.Name != n {
			t.Errorf("%s: name: %q differs from the file's name", n, s.Name)
		}
		if prev != nil && place(prev) > place(s) {
			t.Errorf("%s (run_order %d) runs after %s (run_order %d): want the lower run_order first, then name order", n, s.RunOrder, prev.Name, prev.RunOrder)
		}
		prev = s
		for _, z := range []Size{Full, Quick} {
			pts := s.Points(z)
			if s.Capacity != nil {
				// A search's points are its levels: the start's run is valid.
				p := s.CapacityPoint(z)
				p.Load.Rate = s.Capacity.Start
				pts = append(pts, p)
			}
			if len(pts) == 0 {
				t.Errorf("%s at %s: no points", n, z)
			}
			for _, p := range pts {
				if err := p.Load.Validate(); err != nil {
					t.Errorf("%s/%s at %s: %v", n, p.Key, z, err)
				}
			}
		}
	}
}

func TestPoints(t *testing.T) {
	t.Parallel()
	sweep, err := Builtin("concurrency-sweep")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	quick := sweep.Sizes[Quick]
	if quick.Waves == 0 || quick.MaxTokens == 0 || quick.Warmup == nil || quick.SamplerInterval == 0 {
		t.Fatalf("concurrency-sweep's quick size %+v: this test wants waves, max_tokens, warmup and sampler_interval set", quick)
	}
	for _, p := range sweep.Points(Quick) {
		keys = append(keys, p.Key)
		// Quick: the file's waves × concurrency (at least min_requests),
		// its max_tokens, warm-up and sampling interval override the
		// scenario's.
		if got, want := p.Load.Requests, max(quick.Waves*p.Load.Concurrency, quick.MinRequests); got != want {
			t.Errorf("%s: %d requests, want %d", p.Key, got, want)
		}
		if got := p.Classes[0].Config.MaxTokens; got != quick.MaxTokens {
			t.Errorf("%s: max tokens %d, want the quick size's %d", p.Key, got, quick.MaxTokens)
		}
		if got := p.Load.Warmup; got != *quick.Warmup || got == sweep.Warmup {
			t.Errorf("%s: warm-up %d, want the quick size's %d (the scenario's is %d)", p.Key, got, *quick.Warmup, sweep.Warmup)
		}
		if p.SamplerInterval != quick.SamplerInterval {
			t.Errorf("%s: sampler interval %v, want %v", p.Key, p.SamplerInterval, quick.SamplerInterval)
		}
	}
	if got, want := strings.Join(keys, " "), "conc=1 conc=2 conc=4 conc=8 conc=16 conc=32"; got != want {
		t.Errorf("keys = %s, want %s", got, want)
	}
	full := sweep.Points(Full)
	if got := full[0].Classes[0].Config.MaxTokens; got != 150 {
		t.Errorf("full max tokens = %d, want the file's 150", got)
	}
	if full[0].SamplerInterval != DefaultSamplerInterval {
		t.Errorf("full sampler interval %v, want %v", full[0].SamplerInterval, DefaultSamplerInterval)
	}

	tt, err := Builtin("ttft-tpot")
	if err != nil {
		t.Fatal(err)
	}
	keys = nil
	for _, p := range tt.Points(Quick) {
		keys = append(keys, p.Key)
		if len(p.Classes) != 1 {
			t.Errorf("%s: %d classes, want one per point", p.Key, len(p.Classes))
		}
	}
	if got, want := strings.Join(keys, " "), "prompt=short/conc=1 prompt=medium/conc=1 prompt=long/conc=1"; got != want {
		t.Errorf("ttft-tpot keys = %s, want %s", got, want)
	}
	ps, err := Builtin("poisson")
	if err != nil {
		t.Fatal(err)
	}
	if p := ps.Points(Full)[0]; p.Key != "rate=4" || p.Load.Rate != 4 || p.Load.MaxConcurrency != 64 || p.Concurrency() != 64 {
		t.Errorf("poisson point = %+v", p)
	}
	if got := FormatRate(math.Inf(1)); got != "inf" {
		t.Errorf("FormatRate(inf) = %s", got)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, want string // one testdata file per failure; the error's position and words
	}{
		// A misspelt key, with its position and a suggestion.
		{"unknown-key.yaml", `unknown-key.yaml:8:1: unknown key "expct" (did you mean "expect"?)`},
		// A prompt fixture that does not exist, with the ones that do.
		{"missing-fixture.yaml", `missing-fixture.yaml:3:5: classes[0]: fixture prompt "huge" does not exist: choose one of long, medium, short, system`},
		// Closed and open loop in one scenario.
		{"both-loads.yaml", `both-loads.yaml:4:7: load: concurrency, rate, trace and ramp exclude each other`},
		// A trace replay of a data set without timestamps.
		{"trace-not-timed.yaml", `trace-not-timed.yaml:5:3: load: trace: replays one class whose dataset: is a trace`},
		// More requests than the trace holds.
		{"trace-too-many.yaml", `trace-too-many.yaml:7:3: size: full: requests 13: the trace has 12`},
		// A data set file that does not exist, with the built-in ones.
		{"dataset-missing.yaml", `dataset-missing.yaml:3:5: classes[0]: dataset: open nowhere.jsonl: no such file or directory (built-in data sets: prompts.jsonl, sharegpt.json, trace.jsonl)`},
		// More prompts than pass vLLM's ShareGPT filters.
		{"dataset-too-few.yaml", `dataset-too-few.yaml:3:5: classes[0]: dataset sharegpt.json: 11 prompts asked for, but only 10`},
		// Each size must be given.
		{"no-quick.yaml", `no-quick.yaml:6:3: size: missing quick`},
		// A class with two prompt sources.
		{"two-sources.yaml", `two-sources.yaml:3:5: classes[0]: give exactly one of prompt:`},
		// A rate that is not a number.
		{"bad-rate.yaml", `bad-rate.yaml:4:15: rate "fast": want a positive number`},
		// A knee needs points to compare.
		{"knee-few-points.yaml", `knee-few-points.yaml:5:7: knee: needs at least 3 concurrency points`},
		// A duration without a unit.
		{"bad-duration.yaml", `bad-duration.yaml:6:33: "soon": want a positive duration`},
		// rate inf bounded only by time would send without end.
		{"inf-unbounded.yaml", `inf-unbounded.yaml:6:3: size: full: rate inf sends every request at once: give requests:`},
		// A capacity search picks its own levels.
		{"capacity-levels.yaml", `capacity-levels.yaml:4:7: load: a capacity search picks its own levels`},
		// ... over rate or concurrency only.
		{"capacity-over.yaml", `capacity-over.yaml:5:11: capacity: over "users": want rate`},
		// ... from a whole concurrency.
		{"capacity-start.yaml", `capacity-start.yaml:5:11: capacity: start 1.5: want the first level`},
		// ... with no client-side cap hiding the overload.
		{"capacity-cap.yaml", `capacity-cap.yaml:4:7: load: max_concurrency would hold an overload back`},
		// The name is required.
		{"no-name.yaml", `no-name.yaml:1:1: missing name`},
		// A run order places a scenario first: 1 or more.
		{"bad-run-order.yaml", `bad-run-order.yaml:2:12: run_order: 0: want 1 or more`},
		// A ramp's strategy is vLLM's: linear or exponential.
		{"ramp-strategy.yaml", `ramp-strategy.yaml:5:9: load: ramp: ramp-up strategy "step": want linear or exponential`},
		// ... and it climbs.
		{"ramp-descends.yaml", `ramp-descends.yaml:5:9: load: ramp: ramp-up start 20 req/s above its end 2 req/s: the ramp climbs; swap them`},
		// ... from a positive rate.
		{"ramp-zero-start.yaml", `ramp-zero-start.yaml:5:9: load: ramp: ramp-up start 0 req/s: want a positive, finite rate`},
		// ... with its keys spelt right.
		{"ramp-unknown-key.yaml", `ramp-unknown-key.yaml:5:42: unknown key "end_rate" (did you mean "end_rps"?)`},
		// A ramp is a load shape of its own.
		{"ramp-and-rate.yaml", `ramp-and-rate.yaml:5:3: load: concurrency, rate, trace and ramp exclude each other`},
		// ... that climbs over requests, not a duration.
		{"ramp-duration.yaml", `ramp-duration.yaml:7:3: size: full: a ramp climbs over its requests, as vLLM's: give requests: 40 or more`},
		// ... enough of them for its rate windows.
		{"ramp-few-requests.yaml", `ramp-few-requests.yaml:7:3: size: quick: a ramp climbs over its requests, as vLLM's: give requests: 40 or more (4 rate windows of 10 at least)`},
		// ... and picks no levels for a capacity search.
		{"ramp-capacity.yaml", `ramp-capacity.yaml:5:3: load: a capacity search picks its own levels: drop concurrency:, rate:, trace: and ramp:`},
		// ... nor walks a live chat's rate.
		{"ramp-live-chat.yaml", `ramp-live-chat.yaml:5:9: load: ramp: a live chat's turns wait on their replies`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			_, err = Parse(tc.file, data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v\nwant it to contain %s", err, tc.want)
			}
		})
	}
}

func TestUnknownBuiltin(t *testing.T) {
	t.Parallel()
	if _, err := Builtin("sweep"); err == nil || !strings.Contains(err.Error(), "choose one of ttft-tpot, concurrency-sweep") {
		t.Errorf("Builtin(sweep) error = %v", err)
	}
}

// TestCapacityPoint: a capacity search has no fixed points; its base point
// carries the size's least requests and duration, classes sized.
func TestCapacityPoint(t *testing.T) {
	t.Parallel()
	s, err := Builtin("slo-capacity")
	if err != nil {
		t.Fatal(err)
	}
	if !s.OptIn || slices.Contains(DefaultNames(), "slo-capacity") {
		t.Errorf("slo-capacity is opt-in: the suite runs it when named, not by default (%v)", DefaultNames())
	}
	if pts := s.Points(Full); len(pts) != 0 {
		t.Errorf("Points = %d, want none: the search picks its levels", len(pts))
	}
	if s.Capacity == nil || s.Capacity.Over != "rate" || s.Capacity.Start != 4 {
		t.Fatalf("capacity = %+v, want over rate from 4", s.Capacity)
	}
	p := s.CapacityPoint(Quick)
	if p.Load.Requests != 50 || p.Load.Duration != 8*time.Second || p.Load.Burstiness != 1 || p.Load.Warmup != 1 {
		t.Errorf("quick load = %+v, want 50 requests, 8s, burstiness 1, warm-up 1", p.Load)
	}
	if got := p.Classes[0].Config.MaxTokens; got != 32 {
		t.Errorf("quick max tokens %d, want 32", got)
	}
	if f := s.CapacityPoint(Full); f.Load.Requests != 100 || f.Load.Duration != 30*time.Second || f.Classes[0].Config.MaxTokens != 150 {
		t.Errorf("full = %+v, max tokens %d", f.Load, f.Classes[0].Config.MaxTokens)
	}
}

// TestDatasetScenarios: the built-in data set scenarios expand into one
// point per file, and a trace's replays at their speeds; their config line
// names every data set.
func TestDatasetScenarios(t *testing.T) {
	t.Parallel()
	ds, err := Builtin("datasets")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, p := range ds.Points(Quick) {
		keys = append(keys, p.Key)
	}
	if got, want := strings.Join(keys, " "), "prompt=sharegpt/conc=4 prompt=jsonl/conc=4"; got != want {
		t.Errorf("keys = %s, want %s", got, want)
	}
	lines := ds.ConfigLines()
	if len(lines) != 1 || lines[0][0] != "dataset" || !strings.Contains(lines[0][1], "sharegpt.json requests=10 sha256=") || !strings.Contains(lines[0][1], "; prompts.jsonl requests=10 sha256=") {
		t.Errorf("ConfigLines = %q", lines)
	}
	tr, err := Builtin("trace-replay")
	if err != nil {
		t.Fatal(err)
	}
	pts := tr.Points(Quick)
	if len(pts) != 2 || pts[0].Key != "trace=1" || pts[1].Key != "trace=2" {
		t.Fatalf("trace points = %+v", pts)
	}
	whole := tr.Classes[0].Dataset.Arrivals()
	last := len(whole) - 1
	if got := pts[1].Load.Arrivals[last]; got != whole[last]/2 {
		t.Errorf("at speed 2 the last arrival is at %v, want %v", got, whole[last]/2)
	}
	if pts[0].Load.Requests != 0 || len(pts[0].Load.Arrivals) != 12 {
		t.Errorf("quick replays the whole trace: requests %d, arrivals %d", pts[0].Load.Requests, len(pts[0].Load.Arrivals))
	}
	if got, _ := Builtin("poisson"); got.ConfigLines() != nil {
		t.Errorf("a scenario without data sets has config lines %q", got.ConfigLines())
	}
}

// TestLiveChat: a live chat's points send whole conversations, the think
// time between turns; a live chat among other classes of one point, and a
// think time without one, are refused.
func TestLiveChat(t *testing.T) {
	t.Parallel()
	sc, err := Builtin("chat-live")
	if err != nil {
		t.Fatal(err)
	}
	p := sc.Points(Quick)[0]
	if p.Load.Turns != 4 || p.Load.ThinkTime != 200*time.Millisecond || p.Load.Requests != 4 || !p.Classes[0].Chat.Live {
		t.Errorf("point %+v", p.Load)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"name: x\nclasses:\n  - {name: a, chat: assistant, live: true, max_tokens: 8}\n  - {name: b, prompt: short, max_tokens: 8}\nload: {rate: [1]}\nsize: {full: {requests: 1}, quick: {requests: 1}}\n", "must be its point's only class"},
		{"name: x\nclasses:\n  - {name: b, prompt: short, max_tokens: 8}\nload: {rate: [1], think_time: 1s}\nsize: {full: {requests: 1}, quick: {requests: 1}}\n", "think_time: applies to live chat classes"},
		{"name: x\nclasses:\n  - {name: a, chat: assistant, live: true, conversations: 2, max_tokens: 8}\nload: {rate: [1]}\nsize: {full: {requests: 1}, quick: {requests: 1}}\n", "a live conversation is its own"},
	} {
		if _, err := Parse("x.yaml", []byte(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error = %v, want %q", err, tc.want)
		}
	}
}

// TestWorkloadsDocDatasetLine: docs/workloads.md shows the datasets
// scenario's config line as the suite prints it.
func TestWorkloadsDocDatasetLine(t *testing.T) {
	t.Parallel()
	sc, err := Builtin("datasets")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "workloads.md"))
	if err != nil {
		t.Fatal(err)
	}
	kv := sc.ConfigLines()[0]
	if line := kv[0] + ": " + kv[1]; !strings.Contains(string(doc), line+"\n") {
		t.Errorf("docs/workloads.md lacks the line the suite prints:\n%s", line)
	}
}

// TestRampScenario: the built-in ramp expands into one open-loop point
// per size whose rate climbs over the size's requests, keyed by its
// strategy.
func TestRampScenario(t *testing.T) {
	t.Parallel()
	sc, err := Builtin("ramp")
	if err != nil {
		t.Fatal(err)
	}
	if sc.Ramp == nil || sc.Ramp.Strategy != "linear" || !(sc.Ramp.StartRPS < sc.Ramp.EndRPS) {
		t.Fatalf("ramp = %+v, want a linear climb", sc.Ramp)
	}
	if !sc.OptIn || slices.Contains(DefaultNames(), "ramp") {
		t.Errorf("ramp is opt-in until baselines/sim.txt records it (%v)", DefaultNames())
	}
	for _, z := range []Size{Quick, Full} {
		pts := sc.Points(z)
		if len(pts) != 1 {
			t.Fatalf("%s: %d points, want one ramp", z, len(pts))
		}
		p := pts[0]
		if p.Key != "ramp=linear" || p.Load.Ramp == nil || *p.Load.Ramp != *sc.Ramp || p.Load.Rate != 0 || p.Load.Duration != 0 {
			t.Errorf("%s: point %s, load %+v", z, p.Key, p.Load)
		}
		if p.Load.Requests != sc.Sizes[z].Requests || p.Load.Requests < minRampRequests {
			t.Errorf("%s: %d requests, want the size's %d (at least %d)", z, p.Load.Requests, sc.Sizes[z].Requests, minRampRequests)
		}
		if p.Load.Ramp == sc.Ramp {
			t.Errorf("%s: the point shares the scenario's ramp: a change to one would change the other", z)
		}
	}
	// each-class: one ramp per class, the class in its key.
	y := "name: x\nclasses:\n  - {name: a, prompt: short, max_tokens: 8}\n  - {name: b, prompt: long, max_tokens: 8}\npoints: each-class\n" +
		"load: {ramp: {strategy: exponential, start_rps: 1, end_rps: 8}, max_concurrency: 4}\nsize: {full: {requests: 100}, quick: {requests: 40}}\n"
	sc, err = Parse("x.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, p := range sc.Points(Quick) {
		keys = append(keys, p.Key)
		if p.Load.MaxConcurrency != 4 {
			t.Errorf("%s: max concurrency %d, want the file's 4", p.Key, p.Load.MaxConcurrency)
		}
	}
	if got, want := strings.Join(keys, " "), "prompt=a/ramp=exponential prompt=b/ramp=exponential"; got != want {
		t.Errorf("keys = %s, want %s", got, want)
	}
}
