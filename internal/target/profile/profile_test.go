package profile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily/familytest"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// TestBuiltinsParse loads every registered family's built-in profiles
// and checks the invariants each must hold; the selected family's are
// vLLM's when VLLMPERF_FAMILY is unset.
func TestBuiltinsParse(t *testing.T) {
	if !slices.Equal(Names(), BuiltinsFor(serverfamily.VLLM).Names()) && os.Getenv(envvar.Family.Name) == "" {
		t.Errorf("Names() = %v, want vLLM's set with VLLMPERF_FAMILY unset", Names())
	}
	for _, fam := range serverfamily.All() {
		set := BuiltinsFor(fam)
		names := set.Names()
		// The folder's files are the built-in profiles: whatever it holds.
		want := Dir(filepath.Join("..", "..", "..", "scenarios", "profiles", fam.Key)).Names()
		if !slices.Equal(names, want) || !slices.Contains(names, "basic") {
			t.Fatalf("%s: Names() = %v, want the files of scenarios/profiles/%s: %v (basic among them)", fam.Name, names, fam.Key, want)
		}
		for _, n := range names {
			p, err := set.Get(n)
			if err != nil {
				t.Fatalf("%s: Get(%q): %v", fam.Name, n, err)
			}
			if p.Name != n {
				t.Errorf("%s: name: %q does not match its file name", n, p.Name)
			}
			if p.Model != DefaultModel {
				t.Errorf("%s: model = %q, want %q", n, p.Model, DefaultModel)
			}
			if p.Description == "" {
				t.Errorf("%s: no description", n)
			}
			if len(p.Flags) == 0 {
				t.Errorf("%s: no flags", n)
			}
		}
	}
}

// TestSGLangProfiles: SGLang's profiles render its own flags for vLLM's
// choices, and a vLLM flag in its folder is refused by name.
func TestSGLangProfiles(t *testing.T) {
	set := BuiltinsFor(serverfamily.SGLang)
	tests := []struct{ name, want string }{
		{"basic", "--dtype float16 --context-length 4096 --trust-remote-code"},
		{"high-throughput", "--dtype float16 --context-length 4096 --max-running-requests 64 --chunked-prefill-size 4096 --mem-fraction-static 0.92 --trust-remote-code"},
		{"low-latency", "--dtype float16 --max-running-requests 16 --chunked-prefill-size 512 --mem-fraction-static 0.90 --trust-remote-code"},
		{"memory-saving", "--dtype float16 --kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.70 --context-length 2048 --max-running-requests 32 --trust-remote-code"},
	}
	for _, tt := range tests {
		p, err := set.Get(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(p.Args(), " "); got != tt.want {
			t.Errorf("%s: Args()\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
	if _, err := ParseFor(serverfamily.SGLang, "x.yaml", []byte("name: x\nflags:\n  max-num-seqs: 8\n")); err == nil || !strings.Contains(err.Error(), "unknown SGLang flag --max-num-seqs") {
		t.Errorf("a vLLM flag on SGLang: %v, want unknown SGLang flag", err)
	}
}

// TestSeedFlagsVerbatim checks that the two profiles the seed article gives
// render exactly its flags, in its order.
func TestSeedFlagsVerbatim(t *testing.T) {
	tests := []struct {
		name string
		want string
	}{
		// 高吞吐 block of the seed article, after --model and --port.
		{"high-throughput", "--dtype float16 --max-model-len 4096 --max-num-seqs 64 --max-num-batched-tokens 4096 --gpu-memory-utilization 0.92 --enable-prefix-caching --trust-remote-code"},
		// 低延迟 block of the seed article, after --model and --port.
		{"low-latency", "--dtype float16 --max-num-seqs 16 --max-num-batched-tokens 512 --enable-chunked-prefill --gpu-memory-utilization 0.90 --trust-remote-code"},
		// Documented choices: FP8 KV cache, lower memory fraction, shorter context.
		{"memory-saving", "--dtype float16 --kv-cache-dtype fp8 --gpu-memory-utilization 0.70 --max-model-len 2048 --max-num-seqs 32 --enable-prefix-caching --trust-remote-code"},
		// N-gram speculation rendered as vLLM's JSON.
		{"speculative", `--dtype float16 --max-model-len 4096 --max-num-seqs 16 --gpu-memory-utilization 0.90 --speculative-config {"method":"ngram","num_speculative_tokens":5,"prompt_lookup_max":5} --trust-remote-code`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Builtin(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(p.Args(), " "); got != tt.want {
				t.Errorf("Args()\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestFullFormat checks every value shape of the format on one fixture.
func TestFullFormat(t *testing.T) {
	p, err := Load(filepath.Join("testdata", "full.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(p.SimArgs(), " ")
	want := `--dtype float16 --max-num-seqs 8 --max-model-len 1024 --no-enable-prefix-caching --trust-remote-code --no-enforce-eager --disable-log-stats --served-model-name short alias ` +
		`--speculative-config {"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4,"nested":{"list":[1,"two",true,null]}} --some-future-flag x --sim-seed 7`
	if got != want {
		t.Errorf("SimArgs()\n got %s\nwant %s", got, want)
	}
	if strings.Contains(strings.Join(p.Args(), " "), "sim-seed") {
		t.Errorf("Args() carries a simulator flag: %v", p.Args())
	}
	if got, want := p.ServedName(), "short"; got != want {
		t.Errorf("ServedName() = %q, want %q", got, want)
	}
	if got, want := p.Model, "org/some-model"; got != want {
		t.Errorf("Model = %q, want %q", got, want)
	}
	if v, ok := p.Flag("max-num-seqs"); !ok || v != "8" {
		t.Errorf("Flag(max-num-seqs) = %q, %v; want 8, true", v, ok)
	}
	if got, want := p.Flags[1].Line, 7; got != want {
		t.Errorf("Flags[1].Line = %d, want %d", got, want)
	}
	wantAdvice := []Advice{{Rule: "small-batch", Why: "--max-num-seqs 8, 1024 tokens", Line: 23}, {Rule: "cold-start", Why: "no flag quoted", Line: 24}}
	if !slices.Equal(p.Advice, wantAdvice) {
		t.Errorf("Advice = %+v, want %+v", p.Advice, wantAdvice)
	}
}

// TestBadProfiles checks that each broken fixture fails with its line and
// a message that names the problem and the fix.
func TestBadProfiles(t *testing.T) {
	tests := []struct {
		file string
		line int      // -1: any line > 0 (yaml.v3 places syntax errors loosely)
		want []string // substrings of the message
	}{
		// A misspelt top-level key.
		{"unknown-key.yaml", 3, []string{`unknown key "flag"`, "vLLM flags go under flags:"}},
		// A misspelt flag gets a did-you-mean and the escape hatch.
		{"flag-typo.yaml", 4, []string{"unknown vLLM flag --max-num-seq", "did you mean --max-num-seqs?", "extra_args"}},
		// The backend owns --port.
		{"reserved.yaml", 3, []string{"--port cannot be set", "binds the server"}},
		// A simulator flag among the vLLM flags.
		{"sim-in-flags.yaml", 3, []string{"simulator flag", "sim_flags"}},
		// A vLLM flag among the simulator flags.
		{"not-sim.yaml", 3, []string{"not a simulator flag"}},
		// The same flag twice, spelt two ways.
		{"duplicate.yaml", 4, []string{"set twice", "line 3"}},
		// No name.
		{"no-name.yaml", 0, []string{"missing name"}},
		// Broken YAML syntax.
		{"bad-yaml.yaml", -1, []string{"invalid YAML"}},
		// flags: written as a list.
		{"flags-list.yaml", 3, []string{"must be a mapping"}},
		// A flag with no value.
		{"null-value.yaml", 3, []string{"has no value", "true"}},
		// diagnose: written as a list.
		{"diagnose-list.yaml", 5, []string{"diagnose: must be a mapping of rule to advice"}},
		// Advice quoting a flag the profile does not set.
		{"diagnose-unset-flag.yaml", 5, []string{"{max-num-seqs} names no flag of this profile", "set --max-num-seqs there"}},
		// Advice quoting a bare flag, which has no value to quote.
		{"diagnose-bare-flag.yaml", 5, []string{"{enable-prefix-caching} names no flag of this profile with a value"}},
		// A rule with no advice.
		{"diagnose-empty.yaml", 5, []string{"high-ttft needs one line of text"}},
		// The same rule twice.
		{"diagnose-duplicate.yaml", 6, []string{"high-ttft set twice (first on line 5)"}},
		// A rule's title where its ID belongs.
		{"diagnose-bad-id.yaml", 5, []string{`"High TTFT" is not a rule ID`}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", tt.file)
			_, err := Load(path)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %q is not a *profile.Error", err, err)
			}
			if (tt.line >= 0 && pe.Line != tt.line) || (tt.line < 0 && pe.Line <= 0) {
				t.Errorf("line = %d, want %d (%v)", pe.Line, tt.line, err)
			}
			if pe.File != path {
				t.Errorf("file = %q, want %q", pe.File, path)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestOverrides checks the model override and the extra-args escape hatch.
func TestOverrides(t *testing.T) {
	p, err := Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	q := p.WithModel("org/other").WithExtraArgs("--max-num-seq", "8")
	if q.Model != "org/other" || q.ServedName() != "org/other" {
		t.Errorf("WithModel: model %q, served %q", q.Model, q.ServedName())
	}
	if p.Model != DefaultModel {
		t.Errorf("WithModel changed the original: %q", p.Model)
	}
	if got := q.WithModel("").Model; got != "org/other" {
		t.Errorf("WithModel(\"\") = %q, want unchanged", got)
	}
	args := q.Args()
	if got := strings.Join(args[len(args)-2:], " "); got != "--max-num-seq 8" {
		t.Errorf("extra args not last: %v", args)
	}
	if len(p.ExtraArgs) != 0 {
		t.Errorf("WithExtraArgs changed the original: %v", p.ExtraArgs)
	}
}

// TestResolve checks name and path lookup, and the unknown-name message.
func TestResolve(t *testing.T) {
	if p, err := Resolve("low-latency"); err != nil || p.Name != "low-latency" {
		t.Errorf("Resolve(low-latency) = %q, %v", p.Name, err)
	}
	ex := filepath.Join("..", "..", "..", "scenarios", "examples", "multi-gpu-tp2.yaml")
	p, err := Resolve(ex)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := p.Flag("tensor-parallel-size"); v != "2" {
		t.Errorf("multi-gpu example: tensor-parallel-size = %q, want 2", v)
	}
	_, err = Resolve("fast")
	if err == nil || !strings.Contains(err.Error(), "basic, high-throughput") {
		t.Errorf("Resolve(fast) error = %v, want the list of built-ins", err)
	}
	if _, err := Resolve("missing.yaml"); err == nil || !strings.Contains(err.Error(), "read profile") {
		t.Errorf("Resolve(missing.yaml) error = %v, want a read error", err)
	}
}

// TestParseFor: a profile's flags: are its server family's; another
// family's flag, a reserved one and a typo are refused in that family's
// words, and its negatable flags render their --no- form.
func TestParseFor(t *testing.T) {
	acme := familytest.Acme()
	p, err := ParseFor(acme, "acme.yaml", []byte("name: acme\nflags:\n  batch-slots: 8\n  warmup: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(p.Args(), " "), "--batch-slots 8 --no-warmup"; got != want {
		t.Errorf("Args = %q, want %q", got, want)
	}
	tests := []struct{ yaml, want string }{
		{"name: a\nflags:\n  max-num-seqs: 8\n", "flags: unknown Acme flag --max-num-seqs; if your Acme version has it, pass it under extra_args: instead"},
		{"name: a\nflags:\n  batch-slot: 8\n", "unknown Acme flag --batch-slot (did you mean --batch-slots?)"},
		{"name: a\nflags:\n  listen-port: 9\n", "flags: --listen-port cannot be set in a profile: the backend binds the server itself"},
	}
	for _, tt := range tests {
		if _, err := ParseFor(acme, "a.yaml", []byte(tt.yaml)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseFor(%q) = %v, want an error containing %q", tt.yaml, err, tt.want)
		}
	}
	if _, err := Parse("a.yaml", []byte("name: a\nflags:\n  batch-slots: 8\n")); err == nil || !strings.Contains(err.Error(), "unknown vLLM flag --batch-slots") {
		t.Errorf("Parse (vLLM) accepted Acme's flag: %v", err)
	}
	// The environment a family sets in its containers is its own.
	env := []byte("name: a\nenv:\n  VLLM_NO_USAGE_STATS: 0\n")
	if _, err := Parse("a.yaml", env); err == nil || !strings.Contains(err.Error(), "env: VLLM_NO_USAGE_STATS cannot be set in a profile: vllmperf sets VLLM_NO_USAGE_STATS=1 in every vLLM container") {
		t.Errorf("Parse with vLLM's container env = %v", err)
	}
	if _, err := ParseFor(acme, "a.yaml", env); err != nil {
		t.Errorf("ParseFor(Acme) refused vLLM's container env: %v", err)
	}
}

// TestDirSet reads a folder of profiles as the built-in set is read: a
// profile by its file's name, which its name: must match.
func TestDirSet(t *testing.T) {
	set := Dir(filepath.Join("testdata", "set"))
	if got, want := strings.Join(set.Names(), ","), "one,renamed"; got != want {
		t.Fatalf("Names() = %s, want %s", got, want)
	}
	if p, err := set.Get("one"); err != nil || p.Name != "one" || p.Source != filepath.Join("testdata", "set", "one.yaml") {
		t.Errorf("Get(one) = %+v, %v", p, err)
	}
	for _, tt := range []struct{ name, want string }{
		{"renamed", `testdata/set/renamed.yaml: name: "other" differs from the file's name: write ` + "`name: renamed` (profiles are found by their file name)"},
		{"none", `profile "none" is not in testdata/set: choose one of one, renamed`},
	} {
		if _, err := set.Get(tt.name); err == nil || err.Error() != tt.want {
			t.Errorf("Get(%s) = %v, want %s", tt.name, err, tt.want)
		}
	}
	if _, err := set.All(); err == nil || !strings.Contains(err.Error(), "renamed.yaml") {
		t.Errorf("All() = %v, want the renamed file's error", err)
	}
}
