package profile

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestEnv(t *testing.T) {
	t.Parallel()
	p, err := Load(filepath.Join("testdata", "env-ok.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := []EnvVar{{"VLLM_ATTENTION_BACKEND", "FLASHINFER", 4}, {"OMP_NUM_THREADS", "8", 5}, {"VLLM_USE_V1", "1", 6}, {"EMPTY", "", 7}}
	if !slices.Equal(p.Env, want) {
		t.Errorf("Env = %+v, want %+v", p.Env, want)
	}
}

func TestEnvErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		file string
		line int
		want []string
	}{
		// env: written as a list of K=V
		{"env-list.yaml", 3, []string{"env: must be a mapping"}},
		// a name the shell would refuse
		{"env-bad-name.yaml", 4, []string{`"1BAD" is not a variable name`}},
		// the same variable twice
		{"env-duplicate.yaml", 4, []string{"OMP_NUM_THREADS set twice", "line 3"}},
		// a secret vllmperf passes itself
		{"env-reserved.yaml", 3, []string{"HF_TOKEN cannot be set in a profile", "never sits in a file"}},
		// no value
		{"env-null.yaml", 3, []string{"VLLM_ATTENTION_BACKEND has no value"}},
		// a mapping as a value
		{"env-nested.yaml", 4, []string{"VLLM_X must be a single value"}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", tt.file)
			_, err := Load(path)
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("Load: %v, want a *profile.Error", err)
			}
			if pe.Line != tt.line || pe.File != path {
				t.Errorf("at %s:%d, want %s:%d (%v)", pe.File, pe.Line, path, tt.line, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
