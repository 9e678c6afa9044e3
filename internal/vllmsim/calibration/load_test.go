package calibration

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// loadFixture loads one testdata file as a whole calibration set, so the
// checks that span files (ids, split rule) run too.
func loadFixture(t *testing.T, name string) ([]Row, error) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return LoadFS(fstest.MapFS{"data/" + name: {Data: b}}, "data")
}

// TestValidFixture checks that the base fixture loads and every field
// arrives typed.
func TestValidFixture(t *testing.T) {
	rows, err := loadFixture(t, "valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("got %d rows, want 1", len(rows))
	}
	r := rows[0]
	got := []any{r.ID, r.Split, r.File, r.Line, r.Source.ID, r.Hardware.GPU, r.Hardware.Count, r.Model.Preset, r.Model.Shape,
		r.Server.VLLMVersion, len(r.Server.Flags), r.Workload.Client, r.Workload.Endpoint, r.Workload.InputTokens,
		r.Workload.Concurrency, r.Workload.NumPrompts, r.Workload.IgnoreEOS, r.Measured.Completed,
		r.Measured.Duration.String(), r.Measured.TTFT.String(), r.Measured.TPOT.P99.String(), r.Measured.OutputThroughput}
	want := []any{"test-h100-llama-8b-c1", Fit, "data/valid.yaml", 9, "test-source", "h100", 1, "meta-llama/Llama-3.1-8B-Instruct", ShapeExact,
		"0.11.0", 2, ClientVLLMBenchServe, EndpointCompletions, 1024,
		1, 10, true, 10,
		"12.5s", "mean 30.5ms median 30.1ms p99 41.2ms", "7.9ms", 102.4}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("field %d: got %v, want %v", i, got[i], want[i])
		}
	}
	if !r.Runnable() {
		t.Error("Runnable() = false for a row with fixed lengths")
	}
	if got, want := strings.Join(r.Server.Args(), " "), "--max-num-seqs 64 --enforce-eager"; got != want {
		t.Errorf("Server.Args() = %q, want %q", got, want)
	}
}

// TestFailures loads one fixture per defect and checks the error names the
// file, the line and the problem.
func TestFailures(t *testing.T) {
	tests := []struct {
		file string
		line int // 0: no line
		want string
	}{
		// YAML that does not parse: the decoder's line.
		{"bad-yaml.yaml", 7, "invalid YAML"},
		// A misspelled key is never ignored.
		{"unknown-key.yaml", 34, `unknown key "tpot"`},
		// Nothing in the file.
		{"empty.yaml", 0, "empty file"},
		// Two documents: the second would be silently dropped.
		{"two-documents.yaml", 37, "a second YAML document"},
		// A source with an empty row list.
		{"no-rows.yaml", 2, "no rows"},
		// The source's address must be a web address.
		{"source-url.yaml", 6, `source.url: "example.com/bench" is not a web address`},
		// Preset names are checked against the simulator's.
		{"unknown-gpu.yaml", 11, `hardware.gpu: "a6000" is not a simulator GPU preset`},
		{"unknown-model.yaml", 12, `model.preset: "meta-llama/Llama-2-7b-hf" is not a simulator model preset`},
		// A GPU count outside 1..64.
		{"count-zero.yaml", 11, "hardware.count: 0"},
		// More GPUs than the tensor-parallel size.
		{"tp-mismatch.yaml", 11, "4 GPUs but tensor-parallel-size 1"},
		// A model of another shape must say how it differs.
		{"shape-without-note.yaml", 12, "model.note: missing: shape approximate needs a note"},
		// Version written with a leading v.
		{"bad-version.yaml", 14, `server.vllm_version: "v0.11.0"`},
		// Flags: false, and names with dashes.
		{"flag-false.yaml", 16, "server.flags.enforce-eager: false: only `true`"},
		{"flag-dashes.yaml", 16, "without the leading --"},
		// Every row has a split and a locator.
		{"missing-split.yaml", 8, "split: missing"},
		{"missing-locator.yaml", 8, "locator: missing"},
		// The stored split must be the rule's.
		{"wrong-split.yaml", 8, `split is "check" but the split rule assigns "fit"`},
		// Ids are unique.
		{"duplicate-id.yaml", 37, "row ids must be unique"},
		// Workload lengths are required, or declared unpublished, not both.
		{"no-lengths.yaml", 17, "no token lengths"},
		{"lengths-and-unpublished.yaml", 21, "false, yet token lengths are given"},
		// The offline benchmark and only it has endpoint offline.
		{"offline-endpoint.yaml", 19, "has endpoint offline"},
		// The rate is inf or a number.
		{"bad-rate.yaml", 25, "workload.request_rate: \"fast\""},
		// Completed requests cannot exceed the prompts sent.
		{"completed-above-prompts.yaml", 29, "12 completed requests but num_prompts is 10"},
		// Plausibility of figures.
		{"no-metrics.yaml", 27, "measured: no figure"},
		{"tpot-zero.yaml", 34, "measured.tpot_ms.mean: 0: a latency must be > 0 ms"},
		{"ttft-in-seconds.yaml", 33, "above the plausible 1h0m0s"},
		{"p99-below-median.yaml", 33, "measured.ttft_ms.p99: 21.2ms is below the median 30.1ms"},
		{"e2el-below-ttft.yaml", 36, "below mean TTFT"},
		{"output-above-total.yaml", 31, "above total_throughput"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			rows, err := loadFixture(t, tt.file)
			if err == nil {
				t.Fatalf("loaded %d rows, want an error", len(rows))
			}
			if rows != nil {
				t.Errorf("got rows with the error: a set with a defect must not load at all")
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not a *calibration.Error", err)
			}
			if got, want := e.File, "data/"+tt.file; got != want {
				t.Errorf("File = %q, want %q", got, want)
			}
			if e.Line != tt.line {
				t.Errorf("Line = %d, want %d (%v)", e.Line, tt.line, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

// TestEveryFixtureTested keeps the failure table and testdata/ in step: a
// fixture nobody loads tests nothing.
func TestEveryFixtureTested(t *testing.T) {
	src, err := os.ReadFile("load_test.go")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !strings.Contains(string(src), `"`+filepath.Base(f)+`"`) {
			t.Errorf("%s is not used by any test", f)
		}
	}
}

// TestErrorText checks the message layout with and without line and row.
func TestErrorText(t *testing.T) {
	tests := []struct {
		e    Error
		want string
	}{
		// Whole-file problem.
		{Error{File: "a.yaml", Msg: "empty"}, "a.yaml: empty"},
		// Located problem outside a row.
		{Error{File: "a.yaml", Line: 3, Msg: "bad"}, "a.yaml:3: bad"},
		// Located problem in a row.
		{Error{File: "a.yaml", Line: 3, Row: "r1", Msg: "bad"}, "a.yaml:3: row r1: bad"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

// TestLoadFSNoFiles checks that an empty directory is an error, not an
// empty set that would calibrate nothing.
func TestLoadFSNoFiles(t *testing.T) {
	_, err := LoadFS(fstest.MapFS{"data/readme.txt": {Data: []byte("x")}}, "data")
	if err == nil || !strings.Contains(err.Error(), "no *.yaml file") {
		t.Fatalf("err = %v, want a no *.yaml file error", err)
	}
}

// TestDuplicateAcrossFiles checks ids are unique across the set, not only
// within a file.
func TestDuplicateAcrossFiles(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "valid.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = LoadFS(fstest.MapFS{"data/a.yaml": {Data: b}, "data/b.yaml": {Data: b}}, "data")
	if err == nil || !strings.Contains(err.Error(), "data/b.yaml:9: row test-h100-llama-8b-c1: id is also used at data/a.yaml:9") {
		t.Fatalf("err = %v, want the duplicate reported at data/b.yaml:9", err)
	}
}
