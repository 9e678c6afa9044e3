package serverfamily_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily/familytest"
)

// TestFamiliesCheck: the shipped family and the test family are usable;
// a family missing what every stage needs is refused by name.
func TestFamiliesCheck(t *testing.T) {
	t.Parallel()
	for _, f := range []*serverfamily.Family{serverfamily.VLLM, familytest.Acme()} {
		if err := f.Check(); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
	}
	if serverfamily.Default != serverfamily.VLLM || serverfamily.OrDefault(nil) != serverfamily.VLLM {
		t.Errorf("the default family is not vLLM")
	}
	acme := func(edit func(*serverfamily.Family)) *serverfamily.Family { f := familytest.Acme(); edit(f); return f }
	tests := []struct {
		name string
		f    *serverfamily.Family
		want string
	}{
		{"nil", nil, "nil"},
		{"no name", acme(func(f *serverfamily.Family) { f.Name = "" }), "no Name"},
		{"no prefix", acme(func(f *serverfamily.Family) { f.Metrics.Prefix = "" }), `no Metrics.Prefix (vLLM's is "vllm:")`},
		{"no launch", acme(func(f *serverfamily.Family) { f.Launches = nil }), "no Launches"},
		{"no port flag", acme(func(f *serverfamily.Family) { f.Launches[0].PortFlag = "" }), `launch layout "acme" needs a Name and a PortFlag`},
		{"self rename", acme(func(f *serverfamily.Family) { f.Metrics.Renames["x"] = "x" }), `maps "x" onto itself`},
		{"dashed flag", acme(func(f *serverfamily.Family) { f.Launches[0].ModelFlag = "--weights" }), `write flag "--weights" without its dashes`},
		{"upper key", acme(func(f *serverfamily.Family) { f.Key = "Acme" }), `Key "Acme" must be lower case`},
	}
	for _, tt := range tests {
		if err := tt.f.Check(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Check() = %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

// TestLaunch: each layout's entrypoint and command line, and the error for
// a layout the family lacks, which lists the family's own.
func TestLaunch(t *testing.T) {
	t.Parallel()
	args := []string{"--max-num-seqs", "8"}
	tests := []struct {
		f          *serverfamily.Family
		layout     string
		entrypoint []string
		cmd        []string
	}{
		// vLLM's default: the model positional, then host and port.
		{serverfamily.VLLM, "", []string{"vllm", "serve"}, []string{"m", "--host", "0.0.0.0", "--port", "8000", "--max-num-seqs", "8"}},
		{serverfamily.VLLM, "serve", []string{"vllm", "serve"}, []string{"m", "--host", "0.0.0.0", "--port", "8000", "--max-num-seqs", "8"}},
		// Old images: the module, --model.
		{serverfamily.VLLM, "api_server", []string{"python3", "-m", "vllm.entrypoints.openai.api_server"}, []string{"--model", "m", "--host", "0.0.0.0", "--port", "8000", "--max-num-seqs", "8"}},
		// The image's ENTRYPOINT kept, no --host (llm-d-inference-sim).
		{serverfamily.VLLM, "image", nil, []string{"--model", "m", "--port", "8000", "--max-num-seqs", "8"}},
		// Another family's command and flags.
		{familytest.Acme(), "", []string{"acme-serve"}, []string{"--weights", "m", "--listen-port", "8000", "--max-num-seqs", "8"}},
	}
	for _, tt := range tests {
		l, err := tt.f.Launch(tt.layout)
		if err != nil {
			t.Fatalf("%s %q: %v", tt.f.Name, tt.layout, err)
		}
		if got := l.Command("m", 8000, args); !slices.Equal(l.Entrypoint, tt.entrypoint) || !slices.Equal(got, tt.cmd) {
			t.Errorf("%s %q: entrypoint %q cmd %q, want %q %q", tt.f.Name, tt.layout, l.Entrypoint, got, tt.entrypoint, tt.cmd)
		}
	}
	_, err := serverfamily.VLLM.Launch("python")
	if want := `entrypoint "python": use serve (vllm serve MODEL ..., vLLM >= 0.5), api_server (`; err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), " or image (") {
		t.Errorf("Launch(python) = %v, want %q ... or image (...)", err, want)
	}
	if _, err := (&serverfamily.Family{Name: "none"}).Launch(""); err == nil || !strings.Contains(err.Error(), "no Launches") {
		t.Errorf("Launch on a family without layouts = %v, want an error, not a panic", err)
	}
	if _, err := familytest.Acme().Launch("serve"); err == nil || !strings.Contains(err.Error(), "use acme (acme-serve --weights MODEL ...) or image") {
		t.Errorf("Acme Launch(serve) = %v, want Acme's layouts", err)
	}
}

// TestNames: the prefix stripped, renamed names mapped, old names listed.
func TestNames(t *testing.T) {
	t.Parallel()
	v, a := serverfamily.VLLM, familytest.Acme()
	tests := []struct {
		f        *serverfamily.Family
		in, want string
	}{
		{v, "vllm:num_requests_running", "num_requests_running"},
		{v, "vllm:gpu_cache_usage_perc", "kv_cache_usage_perc"},             // renamed in 0.9
		{v, "time_per_output_token_seconds", "inter_token_latency_seconds"}, // without the prefix
		{v, "acme:tokens_out_total", "acme:tokens_out_total"},               // another family's: unchanged
		{a, "acme:tokens_out_total", "generation_tokens_total"},
		{a, "acme:kv_used_ratio", "kv_cache_usage_perc"},
		{a, "vllm:gpu_cache_usage_perc", "vllm:gpu_cache_usage_perc"}, // vLLM's rename is not Acme's
	}
	for _, tt := range tests {
		if got := tt.f.Canonical(tt.in); got != tt.want {
			t.Errorf("%s.Canonical(%q) = %q, want %q", tt.f.Name, tt.in, got, tt.want)
		}
	}
	if got, want := v.OldNames("kv_cache_usage_perc"), []string{"vllm:gpu_cache_usage_perc"}; !slices.Equal(got, want) {
		t.Errorf("OldNames = %q, want %q", got, want)
	}
	if got := a.OldNames("generation_tokens_total"); !slices.Equal(got, []string{"acme:tokens_out_total"}) {
		t.Errorf("Acme OldNames = %q", got)
	}
	if !v.IsRemoved("num_requests_swapped") || a.IsRemoved("num_requests_swapped") {
		t.Errorf("IsRemoved: V0's num_requests_swapped is vLLM's only")
	}
	r := v.Renames()
	r["x"] = "y"
	if _, ok := v.Metrics.Renames["x"]; ok {
		t.Errorf("Renames hands out the family's own map")
	}
}

// TestFlags: known, negatable and reserved flags per family, and the
// did-you-mean on a few typos.
func TestFlags(t *testing.T) {
	t.Parallel()
	v, a := serverfamily.VLLM, familytest.Acme()
	if !v.IsKnownFlag("max-num-seqs") || a.IsKnownFlag("max-num-seqs") || !a.IsKnownFlag("batch-slots") {
		t.Errorf("IsKnownFlag: max-num-seqs is vLLM's, batch-slots Acme's")
	}
	if !v.IsNegatable("enable-prefix-caching") || v.IsNegatable("max-num-seqs") || !a.IsNegatable("warmup") {
		t.Errorf("IsNegatable")
	}
	if why, ok := v.Reserved("port"); !ok || why == "" {
		t.Errorf("Reserved(port) = %q, %v", why, ok)
	}
	if _, ok := a.Reserved("listen-port"); !ok {
		t.Errorf("Acme's listen-port is not reserved")
	}
	if v.Flags.BatchCap != "max-num-seqs" || a.Flags.BatchCap != "batch-slots" {
		t.Errorf("BatchCap = %q, %q", v.Flags.BatchCap, a.Flags.BatchCap)
	}
	tests := []struct {
		f        *serverfamily.Family
		in, want string
	}{
		{v, "max-num-seq", "max-num-seqs"},                      // dropped letter
		{v, "gpu-memory-utilisation", "gpu-memory-utilization"}, // British spelling
		{v, "enable-prefix-cache", "enable-prefix-caching"},     // wrong word ending
		{v, "xyzzy", ""},                 // nothing plausible
		{a, "batch-slot", "batch-slots"}, // the family's own flags
		{a, "max-num-seq", ""},           // vLLM's are not Acme's
	}
	for _, tt := range tests {
		if got := tt.f.SuggestFlag(tt.in); got != tt.want {
			t.Errorf("%s.SuggestFlag(%q) = %q, want %q", tt.f.Name, tt.in, got, tt.want)
		}
	}
}
