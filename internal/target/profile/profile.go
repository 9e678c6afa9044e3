// Package profile reads server profiles: named sets of `vllm serve` flags
// kept as YAML under scenarios/profiles/ (and embedded in the binary), such
// as basic, high-throughput, low-latency, memory-saving and speculative.
//
// A profile file looks like this:
//
//	name: high-throughput
//	description: larger batches and prefix caching for tokens/s
//	model: Qwen/Qwen3-0.6B          # optional; DefaultModel when absent
//	flags:                          # ordered: rendered in the order written
//	  dtype: float16                # --dtype float16
//	  max-num-seqs: 64              # --max-num-seqs 64
//	  enable-prefix-caching: true   # --enable-prefix-caching (bare flag)
//	  enable-chunked-prefill: false # --no-enable-chunked-prefill
//	  speculative-config:           # a mapping renders as compact JSON
//	    method: ngram
//	sim_flags:                      # --sim-* flags, applied by simulator backends only
//	  sim-seed: 1
//	extra_args: ["--some-new-flag", "x"]  # passed verbatim, not checked
//	env:                            # the container's environment (not for --target)
//	  OMP_NUM_THREADS: 8
//	diagnose:                       # what the profile does about a bottleneck
//	  kv-pressure: a {max-model-len}-token context   # rule ID: advice; {flag} is the flag's value
//
// Decoding is strict: an unknown key is an error with its line, and so is a
// flag name that is not a known vLLM serve flag (with a did-you-mean).
// A value of true renders the bare flag; false renders the --no-NAME form
// for vLLM's negatable (BooleanOptionalAction) flags and nothing for the
// others, whose default is already off.
package profile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/vllmperf/vllmperf/internal/strictyaml"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
	"github.com/vllmperf/vllmperf/scenarios"
	"go.yaml.in/yaml/v3"
)

// DefaultModel is the model a profile serves when its file names none.
const DefaultModel = "Qwen/Qwen3-0.6B"

// Flag is one vLLM command-line flag of a profile, in file order.
type Flag struct {
	// Name is the flag without its leading "--", e.g. "max-num-seqs".
	Name string
	// Value is the rendered value; empty for a bare boolean flag.
	Value string
	// Bare is true for a flag written without a value (true booleans and
	// the --no-NAME form of false ones).
	Bare bool
	// Line is the flag's line in the profile file, 0 when built in code.
	Line int
}

// Args renders the flag as command-line arguments.
func (f Flag) Args() []string {
	if f.Bare {
		return []string{serverfamily.Dashed(f.Name)}
	}
	return []string{serverfamily.Dashed(f.Name), f.Value}
}

// Profile is a parsed server profile.
type Profile struct {
	// Name identifies the profile (the file's name: key).
	Name string
	// Description says what the profile is for.
	Description string
	// Model is the Hugging Face model id or path served.
	Model string
	// Flags are the vLLM flags, in file order.
	Flags []Flag
	// SimFlags are --sim-* flags understood only by the simulator.
	SimFlags []Flag
	// ExtraArgs are appended verbatim after Flags, unchecked.
	ExtraArgs []string
	// Env is the server container's environment (env:, in file order):
	// VLLM_* and OMP_* settings that shape its speed. The external
	// backend refuses a profile with env: (a running server's environment
	// is its own).
	Env []EnvVar
	// SimExtraArgs are appended verbatim after SimFlags, for simulator
	// servers only (a real vLLM never sees them): test settings such as
	// faults or a small KV cache, added in code.
	SimExtraArgs []string
	// Source is the file the profile came from, for messages.
	Source string
	// Deployment is true for a server the suite reaches but did not
	// start (the external backend): the profile only names it, and its
	// flags are the deployment's own (see Deployment).
	Deployment bool
	// Advice says which of `vllmperf diagnose`'s bottlenecks the profile
	// addresses, and why (diagnose:, in file order).
	Advice []Advice
}

// DefaultDeploymentLabel names an external deployment in results when the
// user gives no label.
const DefaultDeploymentLabel = "external"

// Deployment is the profile of a deployment the suite did not start: it
// carries the label the results name it by and nothing else: no model
// (the server says which it serves) and no flags, which are the
// deployment's own. An empty label is DefaultDeploymentLabel.
func Deployment(label string) Profile {
	if label == "" {
		label = DefaultDeploymentLabel
	}
	return Profile{Name: label, Description: "a deployment reached by URL; its flags are its own", Deployment: true}
}

// CheckLabel reports whether label can name a deployment in benchmark
// names (profile=LABEL/...): letters, digits, '-', '_' and '.'.
func CheckLabel(label string) error {
	if label == "" {
		return fmt.Errorf("the label is empty: use e.g. %s or prod-h100", DefaultDeploymentLabel)
	}
	for _, r := range label {
		if !(r == '-' || r == '_' || r == '.' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')) {
			return fmt.Errorf("label %q: use letters, digits, '-', '_' and '.' only (it becomes part of benchmark names)", label)
		}
	}
	return nil
}

// Args renders the vLLM flags followed by ExtraArgs: everything a real
// `vllm serve MODEL` needs after the model, except --host and --port.
func (p Profile) Args() []string {
	var out []string
	for _, f := range p.Flags {
		out = append(out, f.Args()...)
	}
	return append(out, p.ExtraArgs...)
}

// SimArgs renders Args followed by the simulator-only SimFlags and
// SimExtraArgs.
func (p Profile) SimArgs() []string {
	out := p.Args()
	for _, f := range p.SimFlags {
		out = append(out, f.Args()...)
	}
	return append(out, p.SimExtraArgs...)
}

// ServedName is the model name clients send: --served-model-name when the
// profile sets it, else Model.
func (p Profile) ServedName() string {
	for _, f := range p.Flags {
		if f.Name == "served-model-name" && !f.Bare {
			// vLLM accepts several names; the first is the one it reports.
			return strings.Fields(f.Value)[0]
		}
	}
	return p.Model
}

// Flag returns the value of the named flag and whether the profile sets it.
func (p Profile) Flag(name string) (string, bool) {
	for _, f := range p.Flags {
		if f.Name == name {
			return f.Value, true
		}
	}
	return "", false
}

// WithModel returns a copy of p serving model instead; an empty model
// leaves p unchanged.
func (p Profile) WithModel(model string) Profile {
	if model != "" {
		p.Model = model
	}
	return p
}

// WithSimArgs returns a copy of p with args appended to SimExtraArgs.
func (p Profile) WithSimArgs(args ...string) Profile {
	p.SimExtraArgs = append(append([]string(nil), p.SimExtraArgs...), args...)
	return p
}

// WithExtraArgs returns a copy of p with args appended to ExtraArgs.
func (p Profile) WithExtraArgs(args ...string) Profile {
	p.ExtraArgs = append(append([]string(nil), p.ExtraArgs...), args...)
	return p
}

// Error is a problem in a profile file, located by line (and column)
// where known.
type Error = strictyaml.Error

// file is the YAML shape of a profile.
type file struct {
	Name        string    `yaml:"name"`
	Description string    `yaml:"description"`
	Model       string    `yaml:"model"`
	Flags       yaml.Node `yaml:"flags"`
	SimFlags    yaml.Node `yaml:"sim_flags"`
	ExtraArgs   []string  `yaml:"extra_args"`
	Env         yaml.Node `yaml:"env"`
	Diagnose    yaml.Node `yaml:"diagnose"`
}

// Load reads and parses the profile file at path.
func Load(path string) (Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Profile{}, fmt.Errorf("read profile: %w", err)
	}
	return Parse(path, data)
}

// Parse parses a profile of the default server family (vLLM); source
// names it in errors (a file path).
func Parse(source string, data []byte) (Profile, error) {
	return ParseFor(serverfamily.Default, source, data)
}

// ParseFor parses a profile whose flags: are fam's server flags.
func ParseFor(fam *serverfamily.Family, source string, data []byte) (Profile, error) {
	var f file
	if err := strictyaml.Decode(source, data, &f,
		strictyaml.KeysHint("a profile has only name, description, model, flags, sim_flags, extra_args, env and diagnose (vLLM flags go under flags:)"),
		strictyaml.EmptyHint("a profile needs at least `name:`")); err != nil {
		return Profile{}, err
	}
	p := Profile{Name: f.Name, Description: f.Description, Model: f.Model, ExtraArgs: f.ExtraArgs, Source: source}
	if p.Name == "" {
		return Profile{}, &Error{File: source, Msg: "missing name: add `name: <profile name>` at the top"}
	}
	if p.Model == "" {
		p.Model = DefaultModel
	}
	var err error
	if p.Flags, err = parseFlags(fam, source, &f.Flags, false); err != nil {
		return Profile{}, err
	}
	if p.SimFlags, err = parseFlags(fam, source, &f.SimFlags, true); err != nil {
		return Profile{}, err
	}
	if p.Env, err = parseEnv(fam, source, &f.Env); err != nil {
		return Profile{}, err
	}
	if p.Advice, err = parseAdvice(source, &f.Diagnose, p.Flags); err != nil {
		return Profile{}, err
	}
	return p, nil
}

// parseFlags reads an ordered mapping of flag → value, fam's flags.
func parseFlags(fam *serverfamily.Family, source string, n *yaml.Node, sim bool) ([]Flag, error) {
	if n.Kind == 0 {
		return nil, nil // key absent
	}
	key := "flags"
	if sim {
		key = "sim_flags"
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, &Error{File: source, Line: n.Line, Msg: fmt.Sprintf("%s: must be a mapping of flag name to value (e.g. `max-num-seqs: 64`)", key)}
	}
	var out []Flag
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := strings.ReplaceAll(strings.TrimPrefix(k.Value, "--"), "_", "-")
		if prev, dup := seen[name]; dup {
			return nil, &Error{File: source, Line: k.Line, Msg: fmt.Sprintf("flag %q set twice (first on line %d): keep one", name, prev)}
		}
		seen[name] = k.Line
		if err := checkName(fam, source, k.Line, name, sim); err != nil {
			return nil, err
		}
		f, ok, err := renderValue(fam, source, name, v)
		if err != nil {
			return nil, err
		}
		if ok {
			f.Line = k.Line
			out = append(out, f)
		}
	}
	return out, nil
}

// checkName validates a flag name for flags: (fam's) or sim_flags:.
func checkName(fam *serverfamily.Family, source string, line int, name string, sim bool) error {
	if sim {
		if !strings.HasPrefix(name, "sim-") {
			return &Error{File: source, Line: line, Msg: fmt.Sprintf("sim_flags: %q is not a simulator flag: simulator flags start with sim-; vLLM flags go under flags:", name)}
		}
		return nil
	}
	if strings.HasPrefix(name, "sim-") {
		return &Error{File: source, Line: line, Msg: fmt.Sprintf("flags: %q is a simulator flag: move it under sim_flags: (a real vLLM would reject it)", name)}
	}
	if why, ok := fam.Reserved(name); ok {
		return &Error{File: source, Line: line, Msg: fmt.Sprintf("flags: --%s cannot be set in a profile: %s", name, why)}
	}
	if !fam.IsKnownFlag(name) {
		msg := fmt.Sprintf("flags: unknown %s flag --%s", fam.Name, name)
		if s := fam.SuggestFlag(name); s != "" {
			msg += fmt.Sprintf(" (did you mean --%s?)", s)
		}
		msg += fmt.Sprintf("; if your %s version has it, pass it under extra_args: instead", fam.Name)
		return &Error{File: source, Line: line, Msg: msg}
	}
	return nil
}

// renderValue renders one of fam's flags' value; ok is false when nothing is
// emitted.
func renderValue(fam *serverfamily.Family, source, name string, v *yaml.Node) (f Flag, ok bool, err error) {
	f.Name = name
	switch v.Kind {
	case yaml.ScalarNode:
		switch v.Tag {
		case "!!bool":
			var b bool
			if err := v.Decode(&b); err != nil {
				return f, false, &Error{File: source, Line: v.Line, Msg: err.Error()}
			}
			if b {
				f.Bare = true
				return f, true, nil
			}
			if fam.IsNegatable(name) {
				f.Name, f.Bare = "no-"+name, true
				return f, true, nil
			}
			return f, false, nil // off is the default: emit nothing
		case "!!null":
			return f, false, &Error{File: source, Line: v.Line, Msg: fmt.Sprintf("flag %q has no value: write `true` for a bare flag or give a value", name)}
		default:
			f.Value = v.Value
			return f, true, nil
		}
	case yaml.MappingNode, yaml.SequenceNode:
		var buf bytes.Buffer
		if err := writeJSON(&buf, v); err != nil {
			return f, false, &Error{File: source, Line: v.Line, Msg: fmt.Sprintf("flag %q: %v", name, err)}
		}
		f.Value = buf.String()
		return f, true, nil
	default:
		return f, false, &Error{File: source, Line: v.Line, Msg: fmt.Sprintf("flag %q: value must be a scalar, a mapping or a list", name)}
	}
}

// writeJSON writes a YAML node as compact JSON, keeping mapping order (vLLM
// reads JSON-valued flags such as --speculative-config).
func writeJSON(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				buf.WriteByte(',')
			}
			k, _ := json.Marshal(n.Content[i].Value)
			buf.Write(k)
			buf.WriteByte(':')
			if err := writeJSON(buf, n.Content[i+1]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, c); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!int", "!!float", "!!bool":
			buf.WriteString(n.Value)
		case "!!null":
			buf.WriteString("null")
		default:
			s, _ := json.Marshal(n.Value)
			buf.Write(s)
		}
	default:
		return fmt.Errorf("line %d: aliases are not supported in JSON values", n.Line)
	}
	return nil
}

// profileDir is the folder of the embedded profiles in scenarios.Profiles:
// one folder per server family, named by its Key.
const profileDir = "profiles"

// Set is a folder of profile files, one profile per NAME.yaml, of one
// server family: the built-in profiles (Builtins, BuiltinsFor) or any
// folder (Dir), so that a test can check a set with a profile added.
type Set struct {
	fsys fs.FS
	dir  string
	// prefix is the folder named in messages: "scenarios/profiles/vllm".
	prefix string
	// fam is the family whose flags the files name; nil: the default.
	fam *serverfamily.Family
}

// Builtins is the built-in set of the selected family
// (serverfamily.Selected: VLLMPERF_FAMILY, vLLM when unset): the files
// embedded from scenarios/profiles/KEY/. An unknown VLLMPERF_FAMILY falls
// back to vLLM here; server.FromEnv, which every run reads, reports it.
func Builtins() Set {
	fam, err := serverfamily.Selected()
	if err != nil {
		fam = serverfamily.Default
	}
	return BuiltinsFor(fam)
}

// BuiltinsFor is fam's built-in set: the files embedded from
// scenarios/profiles/KEY/, parsed with fam's flags.
func BuiltinsFor(fam *serverfamily.Family) Set {
	fam = serverfamily.OrDefault(fam)
	dir := path.Join(profileDir, fam.Key)
	return Set{fsys: scenarios.Profiles, dir: dir, prefix: path.Join("scenarios", dir), fam: fam}
}

// Dir is the set of the profile files in folder dir, of the default family
// (For names another).
func Dir(dir string) Set { return Set{fsys: os.DirFS(dir), dir: ".", prefix: dir} }

// For is the set with its files parsed as fam's profiles.
func (s Set) For(fam *serverfamily.Family) Set {
	s.fam = fam
	return s
}

// Family is the family whose flags the set's files name.
func (s Set) Family() *serverfamily.Family { return serverfamily.OrDefault(s.fam) }

// Names lists the set's profiles, sorted.
func (s Set) Names() []string { return scenarios.Names(s.fsys, s.dir) }

// Get returns the set's profile called name.
func (s Set) Get(name string) (Profile, error) {
	file := path.Join(s.dir, name+".yaml")
	data, err := fs.ReadFile(s.fsys, file)
	if err != nil {
		if s.fsys != fs.FS(scenarios.Profiles) {
			return Profile{}, fmt.Errorf("profile %q is not in %s: choose one of %s", name, s.prefix, strings.Join(s.Names(), ", "))
		}
		return Profile{}, fmt.Errorf("profile %q is not built in: choose one of %s, or pass a YAML file path", name, strings.Join(s.Names(), ", "))
	}
	p, err := ParseFor(s.Family(), path.Join(s.prefix, name+".yaml"), data)
	if err == nil && p.Name != name {
		err = &Error{File: p.Source, Msg: fmt.Sprintf("name: %q differs from the file's name: write `name: %s` (profiles are found by their file name)", p.Name, name)}
	}
	return p, err
}

// All returns every profile of the set, in name order.
func (s Set) All() ([]Profile, error) {
	var out []Profile
	for _, name := range s.Names() {
		p, err := s.Get(name)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Names lists the built-in profiles of the selected family (the files
// embedded from scenarios/profiles/KEY/), sorted.
func Names() []string { return Builtins().Names() }

// Builtin returns the selected family's built-in profile called name, an
// opt-in one (optin.go) included.
func Builtin(name string) (Profile, error) {
	set := Builtins()
	if slices.Contains(set.optIn().Names(), name) {
		return set.optIn().Get(name)
	}
	return set.Get(name)
}

// Resolve returns the built-in profile called ref, or loads ref as a file
// path when it names no built-in (it contains a path separator or ends in
// .yaml/.yml).
func Resolve(ref string) (Profile, error) {
	if strings.ContainsRune(ref, os.PathSeparator) || strings.HasSuffix(ref, ".yaml") || strings.HasSuffix(ref, ".yml") {
		return Load(ref)
	}
	return Builtin(ref)
}

// WriteList lists the selected family's built-in profiles on w (vllmperf
// profiles): each one's name, description and the server command it runs.
func WriteList(w io.Writer) error {
	set := Builtins()
	for _, name := range set.Names() {
		p, err := set.Get(name)
		if err != nil {
			return err
		}
		if err := writeEntry(w, set.Family(), p); err != nil {
			return err
		}
	}
	return writeOptIn(w, set)
}

// writeEntry writes one profile of fam for WriteList: its name and
// description, then the command line of fam's default launch layout
// (`vllm serve MODEL FLAGS...`).
func writeEntry(w io.Writer, fam *serverfamily.Family, p Profile) error {
	words := []string{}
	if l, err := fam.Launch(""); err == nil {
		words = append(words, l.Entrypoint...)
		if l.ModelFlag != "" {
			words = append(words, serverfamily.Dashed(l.ModelFlag))
		}
	}
	words = append(append(words, p.Model), p.Args()...)
	_, err := fmt.Fprintf(w, "%-16s %s\n%-16s %s\n\n", p.Name, p.Description, "", strings.Join(words, " "))
	return err
}
