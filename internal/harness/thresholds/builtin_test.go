package thresholds

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestBuiltinSetsEverything: the shipped thresholds.yaml sets every
// setting of gate:, checks: and knee: at its top level, so that the
// defaults are the file's and no Go value stands in for one.
func TestBuiltinSetsEverything(t *testing.T) {
	t.Parallel()
	for name, v := range map[string]any{"gate": builtin.top.Gate, "checks": builtin.top.Checks, "knee": builtin.top.Knee} {
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
	if DefaultChecks.RunningMinShare != 0.9 || DefaultGate.MinSamples != 6 {
		t.Errorf("defaults not read from thresholds.yaml: %+v %+v", DefaultChecks, DefaultGate)
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
