package cliflags

import (
	"slices"
	"testing"
)

func TestJoinNargs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		in, want []string
	}{
		{"vLLM's form", []string{"run", "--goodput", "ttft:200", "tpot:50", "--rate", "4"}, []string{"run", "--goodput", "ttft:200,tpot:50", "--rate", "4"}},
		{"at the end", []string{"run", "--goodput", "ttft:200", "e2el:900"}, []string{"run", "--goodput", "ttft:200,e2el:900"}},
		{"comma form unchanged", []string{"run", "--goodput", "ttft:200,tpot:50"}, []string{"run", "--goodput", "ttft:200,tpot:50"}},
		{"one value", []string{"run", "--goodput", "ttft:200", "--quiet"}, []string{"run", "--goodput", "ttft:200", "--quiet"}},
		{"a word that is no value stays", []string{"run", "--goodput", "ttft:200", "extra"}, []string{"run", "--goodput", "ttft:200", "extra"}},
		{"a URL is no value", []string{"run", "--goodput", "ttft:200", "http://127.0.0.1:8000"}, []string{"run", "--goodput", "ttft:200", "http://127.0.0.1:8000"}},
		{"the flag last", []string{"run", "--goodput"}, []string{"run", "--goodput"}},
		{"after --", []string{"run", "--", "--goodput", "a:1", "b:2"}, []string{"run", "--", "--goodput", "a:1", "b:2"}},
		{"adapters join", []string{"run", "--lora-modules", "a", "b", "--concurrency", "4"}, []string{"run", "--lora-modules", "a,b", "--concurrency", "4"}},
		{"adapters run to the end", []string{"--lora-modules", "a", "b"}, []string{"--lora-modules", "a,b"}},
		{"the = form stays", []string{"--lora-modules=a,b", "x"}, []string{"--lora-modules=a,b", "x"}},
		{"other flags stay", []string{"--model", "m", "x"}, []string{"--model", "m", "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := JoinNargs(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("JoinNargs(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
