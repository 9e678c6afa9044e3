package thresholds

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestBuiltinSetsEverything: the shipped thresholds.yaml sets every
// setting of gate:, checks: and knee: at its top level, so that the
// defaults are the file's and no Go value stands in for one.
func TestBuiltinSetsEverything(t *testing.T) {
	t.Parallel()
	for name, v := range map[string]any{"gate": builtin.top.Gate, "checks": builtin.top.Checks, "knee": builtin.top.Knee, "capacity": builtin.top.Capacity, "diagnose": builtin.diagnose, "parity": builtin.parity} {
		rv := reflect.ValueOf(v)
		if rv.IsNil() {
			t.Errorf("thresholds.yaml sets no %s:", name)
			continue
		}
		rv = rv.Elem()
		for i := range rv.NumField() {
			f := rv.Field(i)
			if f.Kind() == reflect.Pointer && f.IsNil() {
				t.Errorf("thresholds.yaml: %s: sets no %s", name, rv.Type().Field(i).Tag.Get("yaml"))
			}
		}
	}
	if DefaultChecks.RunningMinShare != 0.9 || DefaultGate.MinSamples != 6 || DefaultDiagnosis.ColdExtra != 50*time.Millisecond || DefaultCapacity.MaxRuns != 14 || DefaultCapacity.MaxTime != 30*time.Minute {
		t.Errorf("defaults not read from thresholds.yaml: %+v %+v %+v", DefaultChecks, DefaultGate, DefaultDiagnosis)
	}
}

// TestResolve: a file given is read or is an error; without one, the
// folder's thresholds.yaml, else the shipped one.
func TestResolve(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := Resolve(filepath.Join(dir, "missing.yaml"), dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file given: err %v, want not exist", err)
	}
	if s, err := Resolve("", dir); err != nil || s != Default() {
		t.Errorf("no file in %s: %v, %v; want the shipped one", dir, s.Source, err)
	}
	own := filepath.Join(dir, "thresholds.yaml")
	if err := os.WriteFile(own, []byte("max_error_rate: 1%\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := Resolve("", dir); err != nil || s.Source != own {
		t.Errorf("the folder's file: %v, %v; want %s", s, err, own)
	}
}

// TestDiagnosisAsMeasured: the shipped diagnose: holds the limits the
// rules were measured with (formerly diagnose.DefaultThresholds).
func TestDiagnosisAsMeasured(t *testing.T) {
	t.Parallel()
	want := Diagnosis{HighTTFTSteps: 10, WaitingShare: 0.5, LongPromptTokens: 1024, TPOTJitterCV: 0.15, ITLJitterCV: 0.35,
		MinJitterRequests: 8, BatchSwing: 0.5, SpecAcceptMin: 0.20, SpecAcceptDrop: 0.25, KVHigh: 0.90, KVFree: 0.50,
		SmallBatchShare: 0.5, ThroughputShare: 0.6, ColdFactor: 3, ColdExtra: 50 * time.Millisecond}
	if got := Default().Diagnosis(); got != want {
		t.Errorf("diagnose:\n got %+v\nwant %+v", got, want)
	}
	s, err := Parse("t.yaml", []byte("diagnose: {kv_high: 80%}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Diagnosis(); got.KVHigh != 0.8 || got.KVFree != want.KVFree {
		t.Errorf("a file's diagnose: over the shipped one: %+v", got)
	}
	if _, err := Parse("t.yaml", []byte("overrides: [{match: {}, diagnose: {kv_high: 80%}}]\n")); err == nil {
		t.Error("diagnose: in an override: no error (it applies at the top level only)")
	}
}
