package scrape

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
)

// The recorded load: 1 warm-up + 8 requests of 256 shared + 512 prompt
// tokens and 32 output tokens, then 1 + 48 requests with 64 output tokens
// (fixtures/metrics/record.sh). Token and request counts follow from it.
const (
	recPromptTokens = 256 + 512
	recBefore       = 9  // requests finished in vllm-sim-v1-before.prom
	recAfter        = 58 // ... and in vllm-sim-v1-after.prom
)

// ttftBounds are vLLM's TTFT bucket bounds (vllm-reference.md §2).
var ttftBounds = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560, math.Inf(1)}

func bounds(h *Histogram) []float64 {
	var out []float64
	for _, b := range h.Buckets {
		out = append(out, b.UpperBound)
	}
	return out
}

func TestParseRecordedV1(t *testing.T) {
	t.Parallel()
	s := mustParseFile(t, "vllm-sim-v1-after.prom")

	for _, tc := range []struct {
		name string
		get  func(string) (float64, error)
		want float64
	}{
		// every request generated exactly its max_tokens (ignore_eos)
		{GenerationTokensTotal, s.Counter, recBefore*32 + (recAfter-recBefore)*64},
		// prompts are all the same length
		{PromptTokensTotal, s.Counter, recAfter * recPromptTokens},
		// every request finished
		{RequestSuccessTotal, s.Counter, recAfter},
		// the run was over when the page was scraped
		{NumRequestsRunning, s.Gauge, 0},
		{NumRequestsWaiting, s.Gauge, 0},
	} {
		got, err := tc.get(tc.name)
		if err != nil || got != tc.want {
			t.Errorf("%s = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}

	m, err := s.Metric(RequestSuccessTotal)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := m.By("finished_reason")
	want := map[string]float64{"abort": 0, "error": 0, "length": recAfter, "stop": 0}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("request_success_total by finished_reason = %v, want %v", got, want)
	}

	h, err := s.Histogram(TimeToFirstTokenSeconds)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := bounds(h), ttftBounds; !slices.Equal(got, want) {
		t.Errorf("TTFT bounds = %v, want vLLM's %v", got, want)
	}
	if h.Count != recAfter || h.Buckets[len(h.Buckets)-1].Count != recAfter || h.Sum <= 0 {
		t.Errorf("TTFT count %v, +Inf %v, sum %v; want %d, %d and a positive sum", h.Count, h.Buckets[len(h.Buckets)-1].Count, h.Sum, recAfter, recAfter)
	}

	info, err := s.Info(CacheConfigInfo)
	if err != nil {
		t.Fatal(err)
	}
	if info["block_size"] != "16" || info["enable_prefix_caching"] != "True" || info["num_gpu_blocks"] == "" {
		t.Errorf("cache_config_info = %v, want block_size 16, prefix caching True and num_gpu_blocks", info)
	}
	if _, ok := info[LabelEngine]; ok {
		t.Errorf("cache_config_info keeps the engine label: %v", info)
	}

	if got, want := s.Engines, []string{"0"}; !slices.Equal(got, want) {
		t.Errorf("Engines = %v, want %v", got, want)
	}
	if got, want := s.Models, []string{"Qwen/Qwen3-0.6B"}; !slices.Equal(got, want) {
		t.Errorf("Models = %v, want %v", got, want)
	}
	if len(s.Renamed) != 0 || len(s.Ignored) != 0 || len(s.Warnings) != 0 {
		t.Errorf("a current exposition gave Renamed %v, Ignored %v, Warnings %v; want none", s.Renamed, s.Ignored, s.Warnings)
	}
}

// sameMetrics fails unless two snapshots hold the same metrics with the same
// kinds and values (Help and Found may differ).
func sameMetrics(t *testing.T, got, want *Snapshot) {
	t.Helper()
	if !slices.Equal(got.Names(), want.Names()) {
		t.Fatalf("names\n got %v\nwant %v", got.Names(), want.Names())
	}
	for _, name := range want.Names() {
		g, _ := got.Metric(name)
		w, _ := want.Metric(name)
		if g.Kind != w.Kind || g.Value != w.Value || !reflect.DeepEqual(g.Parts, w.Parts) ||
			!reflect.DeepEqual(g.Histogram, w.Histogram) || !reflect.DeepEqual(g.Info, w.Info) {
			t.Errorf("%s differs:\n got %s %v %v %+v %v\nwant %s %v %v %+v %v", name,
				g.Kind, g.Value, g.Parts, g.Histogram, g.Info, w.Kind, w.Value, w.Parts, w.Histogram, w.Info)
		}
	}
}

func TestParseOldNamesMapToV1(t *testing.T) {
	t.Parallel()
	old := mustParseFile(t, "vllm-sim-v0.9-after.prom")
	cur := mustParseFile(t, "vllm-sim-v1-after.prom")
	// The same load under both name sets: the same metrics and counts
	// (latencies differ between the two recordings).
	if !slices.Equal(old.Names(), cur.Names()) {
		t.Fatalf("names\n got %v\nwant %v", old.Names(), cur.Names())
	}
	for _, name := range cur.Names() {
		o, _ := old.Metric(name)
		c, _ := cur.Metric(name)
		if o.Kind != c.Kind || o.Value != c.Value || !reflect.DeepEqual(o.Info, c.Info) ||
			(c.Histogram != nil && (o.Histogram.Count != c.Histogram.Count || !sameBounds(o.Histogram, c.Histogram))) {
			t.Errorf("%s: 0.9 names give %+v, V1 names %+v", name, o, c)
		}
	}

	want := []Rename{
		{Canonical: InterTokenLatencySeconds, Found: "vllm:time_per_output_token_seconds"},
		{Canonical: KVCacheUsagePerc, Found: "vllm:gpu_cache_usage_perc"},
		{Canonical: PrefixCacheHitsTotal, Found: "vllm:gpu_prefix_cache_hits_total"},
		{Canonical: PrefixCacheQueriesTotal, Found: "vllm:gpu_prefix_cache_queries_total"},
	}
	if !reflect.DeepEqual(old.Renamed, want) {
		t.Errorf("Renamed = %+v\nwant %+v", old.Renamed, want)
	}
	// Any spelling reaches the metric.
	for _, name := range []string{"kv_cache_usage_perc", "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "gpu_cache_usage_perc"} {
		m, err := old.Metric(name)
		if err != nil || m.Found != "vllm:gpu_cache_usage_perc" {
			t.Errorf("Metric(%q) = %v, %v; want the one found as vllm:gpu_cache_usage_perc", name, m, err)
		}
	}
}

func TestParseWithoutTypeLines(t *testing.T) {
	t.Parallel()
	// The same exposition with every # line removed: histograms come as
	// untyped _bucket/_sum/_count series and must be reassembled.
	sameMetrics(t, mustParseFile(t, "crafted-untyped.prom"), mustParseFile(t, "vllm-sim-v1-after.prom"))
}

func TestParsePythonClientStyle(t *testing.T) {
	t.Parallel()
	py := mustParseFile(t, "crafted-python-client.prom")
	sameMetrics(t, py, mustParseFile(t, "vllm-sim-v1-during.prom"))

	got := map[string]int{}
	for _, ig := range py.Ignored {
		got[ig.Reason]++
	}
	created := 0
	for _, name := range py.Names() {
		if m, _ := py.Metric(name); m.Kind == KindCounter || m.Kind == KindHistogram {
			created++
		}
	}
	want := map[string]int{reasonNotVLLM: 3, reasonCreated: created}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ignored by reason = %v, want %v (one _created per counter and histogram)", got, want)
	}
	if v, err := py.Gauge(NumRequestsRunning); err != nil || v != 16 {
		t.Errorf("num_requests_running = %v, %v; want 16 (mid-run)", v, err)
	}
}

func TestParseTwoEnginesTwoModels(t *testing.T) {
	t.Parallel()
	s := mustParseFile(t, "crafted-two-engines.prom")
	for _, tc := range []struct {
		name string
		get  func(string) (float64, error)
		want float64
	}{
		// summed over 2 engines × 2 models
		{NumRequestsRunning, s.Gauge, 3 + 4 + 1 + 0},
		{NumRequestsWaiting, s.Gauge, 2 + 0 + 0 + 1},
		{PromptTokensTotal, s.Counter, 1000 + 2000 + 300 + 400},
		{GenerationTokensTotal, s.Counter, 640 + 320 + 64 + 32},
		{RequestSuccessTotal, s.Counter, 5 + 5 + 2 + 3 + 1 + 2},
		// a ratio: the fullest engine, not the sum
		{KVCacheUsagePerc, s.Gauge, 0.5},
	} {
		got, err := tc.get(tc.name)
		if err != nil || got != tc.want {
			t.Errorf("%s = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	m, _ := s.Metric(RequestSuccessTotal)
	got, _ := m.By("finished_reason")
	if want := map[string]float64{"stop": 7, "length": 10, "abort": 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("by finished_reason = %v, want %v", got, want)
	}
	h, err := s.Histogram(TimeToFirstTokenSeconds)
	if err != nil {
		t.Fatal(err)
	}
	wantH := &Histogram{
		Buckets: []Bucket{{0.01, 1}, {0.1, 6 + 3 + 1}, {1, 10 + 4 + 1 + 2}, {math.Inf(1), 10 + 5 + 1 + 2}},
		Count:   18, Sum: 1.5 + 3.25 + 0.05 + 1,
	}
	if !reflect.DeepEqual(h, wantH) {
		t.Errorf("TTFT = %+v, want the bucket-wise sum %+v", h, wantH)
	}
	if got, want := s.Engines, []string{"0", "1"}; !slices.Equal(got, want) {
		t.Errorf("Engines = %v, want %v", got, want)
	}
	if got, want := s.Models, []string{"qwen-a", "qwen-b"}; !slices.Equal(got, want) {
		t.Errorf("Models = %v, want %v", got, want)
	}
	if len(s.Warnings) != 0 {
		t.Errorf("Warnings = %v, want none (the engines agree on cache_config_info)", s.Warnings)
	}
}

func TestParseBothNamesPrefersV1(t *testing.T) {
	t.Parallel()
	s := mustParseFile(t, "crafted-both-names.prom")
	// Counted once, from the V1 series, not twice.
	for name, want := range map[string]float64{KVCacheUsagePerc: 0.375, PrefixCacheQueriesTotal: 4096, PrefixCacheHitsTotal: 1024} {
		m, err := s.Metric(name)
		if err != nil || m.Value != want || m.Found != serverfamily.VLLM.Metrics.Prefix+name {
			t.Errorf("%s = %+v, %v; want %v from %s", name, m, err, want, serverfamily.VLLM.Metrics.Prefix+name)
		}
	}
	for _, r := range s.Renamed {
		if !r.BothPresent {
			t.Errorf("rename %+v: BothPresent false, want true", r)
		}
	}
	if len(s.Renamed) != 3 || len(s.Ignored) != 3 {
		t.Fatalf("Renamed %v, Ignored %v; want 3 of each", s.Renamed, s.Ignored)
	}
	for _, ig := range s.Ignored {
		if !strings.HasPrefix(ig.Name, "vllm:gpu_") || !strings.Contains(ig.Reason, "V1 name is also exposed") {
			t.Errorf("ignored %+v, want an old gpu_ name superseded by the V1 one", ig)
		}
	}
}

func TestParseV0OnlyNamesAreIgnored(t *testing.T) {
	t.Parallel()
	s := mustParseFile(t, "crafted-v0-engine.prom")
	var names []string
	for _, ig := range s.Ignored {
		names = append(names, ig.Name)
		if ig.Reason != reasonRemovedV0 {
			t.Errorf("%s ignored because %q, want %q", ig.Name, ig.Reason, reasonRemovedV0)
		}
	}
	if want := []string{"vllm:cpu_cache_usage_perc", "vllm:gpu_prefix_cache_hit_rate", "vllm:num_requests_swapped"}; !slices.Equal(names, want) {
		t.Errorf("ignored %v, want %v", names, want)
	}
	_, err := s.Gauge("num_requests_swapped")
	if !errors.Is(err, ErrNotAvailable) || !strings.Contains(err.Error(), "removed in vLLM V1") {
		t.Errorf("Gauge(num_requests_swapped) error = %v, want not available because removed in V1", err)
	}
	if v, err := s.Gauge(KVCacheUsagePerc); err != nil || v != 0.01 {
		t.Errorf("kv_cache_usage_perc = %v, %v; want 0.01 from gpu_cache_usage_perc", v, err)
	}
}

func TestParseTypesUntypedSamplesByName(t *testing.T) {
	t.Parallel()
	s := mustParse(t, `vllm:num_requests_running{engine="0"} 2
vllm:prompt_tokens_total{engine="0"} 5
vllm:cache_config_info{block_size="32",engine="0"} 1
vllm:new_thing_total 4
vllm:mystery 1.5
# TYPE vllm:gpu_prefix_cache_hits counter
vllm:gpu_prefix_cache_hits 7
# TYPE vllm:latency summary
vllm:latency{quantile="0.5"} 1
vllm:latency_sum 3
vllm:latency_count 2
`, time.Unix(0, 0))
	for _, tc := range []struct {
		name string
		want Kind
	}{
		{NumRequestsRunning, KindGauge},     // known gauge
		{PromptTokensTotal, KindCounter},    // known counter
		{CacheConfigInfo, KindInfo},         // known info metric
		{"new_thing_total", KindCounter},    // unknown, _total convention
		{"mystery", KindUntyped},            // unknown, no convention
		{PrefixCacheHitsTotal, KindCounter}, // counter without _total, old name
	} {
		m, err := s.Metric(tc.name)
		if err != nil || m.Kind != tc.want {
			t.Errorf("%s: %+v, %v; want kind %s", tc.name, m, err, tc.want)
		}
	}
	if v, err := s.Gauge("mystery"); err != nil || v != 1.5 {
		t.Errorf("Gauge(mystery) = %v, %v; want 1.5 (untyped reads as a gauge)", v, err)
	}
	if len(s.Ignored) != 1 || s.Ignored[0].Name != "vllm:latency" || !strings.Contains(s.Ignored[0].Reason, "summary") {
		t.Errorf("Ignored = %v, want the summary vllm:latency", s.Ignored)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		text     string
		wantLine int    // 0: not tied to a line
		want     string // part of the message
	}{
		// nothing at all
		{"empty", "\n\n", 0, "empty exposition"},
		// a value that is not a number
		{"bad value", "vllm:num_requests_running{engine=\"0\"} abc\n", 1, `expected float as value, got "abc"`},
		// the second line is cut inside the label set
		{"cut line", "vllm:a 1\nvllm:b{engine=\"0\"\n", 2, `vllm:b{engine=\"0\"`},
		// two TYPE lines for one family
		{"second TYPE", "# TYPE vllm:a gauge\nvllm:a 1\n# TYPE vllm:a counter\n", 3, "second TYPE line"},
		// the same series twice would be counted twice
		{"duplicate series", "vllm:a{engine=\"0\"} 1\nvllm:a{engine=\"0\"} 2\n", 0, `vllm:a{engine="0"} appears twice`},
		// a histogram bucket twice
		{"duplicate bucket", "# TYPE vllm:h histogram\nvllm:h_bucket{le=\"1\"} 1\nvllm:h_bucket{le=\"1\"} 2\nvllm:h_bucket{le=\"+Inf\"} 2\nvllm:h_count 2\nvllm:h_sum 1\n", 0, `bucket le="1" appears twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(strings.NewReader(tc.text), "http://127.0.0.1:1/metrics", time.Now())
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error = %v, want a *ParseError", err)
			}
			if pe.Line != tc.wantLine || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "http://127.0.0.1:1/metrics") {
				t.Errorf("error = %q (line %d), want line %d, %q and the source", err, pe.Line, tc.wantLine, tc.want)
			}
		})
	}
}

func TestParseMalformedRecording(t *testing.T) {
	t.Parallel()
	_, err := ParseFile(fixture("vllm-sim-malformed.prom"))
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error = %v, want a *ParseError", err)
	}
	if got, want := pe.Line, 3; got != want {
		t.Errorf("line = %d, want %d", got, want)
	}
	if want := `vllm:num_requests_running{model_name="Qwen/Qwen3-0.6B",engine="0" 1`; pe.Text != want {
		t.Errorf("text = %q, want %q", pe.Text, want)
	}
}

func TestParseAcceptsMissingFinalNewline(t *testing.T) {
	t.Parallel()
	s := mustParse(t, `vllm:num_requests_running{engine="0"} 3`, time.Now())
	if v, err := s.Gauge(NumRequestsRunning); err != nil || v != 3 {
		t.Errorf("num_requests_running = %v, %v; want 3", v, err)
	}
}

func TestParseHistogramOddities(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		text        string
		wantErr     string // from Histogram("vllm:h"); "" for none
		wantWarning string // part of a warning; "" for none
		wantCount   float64
	}{
		// engines with different bounds cannot be summed: not available, with the reason
		{"bounds differ", "# TYPE vllm:h histogram\nvllm:h_bucket{engine=\"0\",le=\"1\"} 1\nvllm:h_bucket{engine=\"0\",le=\"+Inf\"} 1\nvllm:h_count{engine=\"0\"} 1\nvllm:h_bucket{engine=\"1\",le=\"2\"} 1\nvllm:h_bucket{engine=\"1\",le=\"+Inf\"} 1\nvllm:h_count{engine=\"1\"} 1\n",
			"different bucket bounds", "", 0},
		// no +Inf bucket: the count stands in, with a warning
		{"no +Inf", "# TYPE vllm:h histogram\nvllm:h_bucket{le=\"1\"} 2\nvllm:h_count 3\nvllm:h_sum 4\n", "", `no le="+Inf" bucket`, 3},
		// +Inf and _count disagree: kept, with a warning
		{"count disagrees", "# TYPE vllm:h histogram\nvllm:h_bucket{le=\"1\"} 2\nvllm:h_bucket{le=\"+Inf\"} 3\nvllm:h_count 4\nvllm:h_sum 4\n", "", "_count says 4", 4},
		// typed, without _count: the +Inf bucket gives the count, no warning
		{"typed no count", "# TYPE vllm:h histogram\nvllm:h_bucket{le=\"1\"} 2\nvllm:h_bucket{le=\"+Inf\"} 5\nvllm:h_sum 9\n", "", "", 5},
		// untyped, without _count: the +Inf bucket gives the count
		{"untyped no count", "vllm:h_bucket{le=\"1\"} 2\nvllm:h_bucket{le=\"+Inf\"} 5\nvllm:h_sum 9\n", "", "", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := mustParse(t, tc.text, time.Now())
			h, err := s.Histogram("vllm:h")
			switch {
			case tc.wantErr != "":
				if !errors.Is(err, ErrNotAvailable) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error = %v, want not available: %s", err, tc.wantErr)
				}
			case err != nil:
				t.Errorf("error = %v", err)
			case h.Count != tc.wantCount:
				t.Errorf("count = %v, want %v", h.Count, tc.wantCount)
			}
			switch {
			case tc.wantWarning == "" && len(s.Warnings) > 0:
				t.Errorf("Warnings = %q, want none", s.Warnings)
			case tc.wantWarning != "" && (len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], tc.wantWarning)):
				t.Errorf("Warnings = %q, want one containing %q", s.Warnings, tc.wantWarning)
			}
		})
	}
}

func TestParseInfoDisagreementWarns(t *testing.T) {
	t.Parallel()
	s := mustParse(t, `vllm:cache_config_info{engine="0",num_gpu_blocks="100"} 1
vllm:cache_config_info{engine="1",num_gpu_blocks="90"} 1
`, time.Now())
	info, err := s.Info(CacheConfigInfo)
	if err != nil || info["num_gpu_blocks"] != "100" {
		t.Errorf("Info = %v, %v; want the first engine's num_gpu_blocks 100", info, err)
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "num_gpu_blocks") {
		t.Errorf("Warnings = %q, want one naming num_gpu_blocks", s.Warnings)
	}
}

func TestAccessorsReportMissingMetricsByName(t *testing.T) {
	t.Parallel()
	s := mustParse(t, "vllm:num_requests_running 1\nvllm:prompt_tokens_total 3\n", time.Now())
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		// absent: both spellings named
		{"absent", func() error { _, err := s.Gauge(KVCacheUsagePerc); return err }, "no vllm:kv_cache_usage_perc or vllm:gpu_cache_usage_perc series"},
		// a gauge asked for as a counter
		{"gauge as counter", func() error { _, err := s.Counter(NumRequestsRunning); return err }, "vllm:num_requests_running is a gauge, not a counter"},
		// a counter asked for as a histogram
		{"counter as histogram", func() error { _, err := s.Histogram(PromptTokensTotal); return err }, "is a counter, not a histogram"},
		// an info metric that is not there
		{"info absent", func() error { _, err := s.Info(CacheConfigInfo); return err }, "vllm:cache_config_info"},
	} {
		err := tc.call()
		var na *NotAvailableError
		if !errors.As(err, &na) || !errors.Is(err, ErrNotAvailable) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error = %v, want a *NotAvailableError containing %q", tc.name, err, tc.want)
		}
	}
}
