// Package serverfamily is the seam between vllmperf and the kind of server
// it measures: what one family of vLLM-compatible servers says its own way.
// A Family gathers, in one value,
//
//   - its /metrics names: the prefix every metric carries, the names it
//     exposes instead of the canonical ones (vLLM's renames across
//     versions), the ones with no canonical counterpart, and the label of
//     cache_config_info that says whether prefix caching is on;
//   - how a container of its image is launched: the command layouts
//     (Launch), each an entrypoint and where the model, host and port go,
//     and the environment every container gets;
//   - the server flags a profile may name, which take a --no- form, which
//     the backend sets itself, and which one caps the batch;
//   - the request extras: the names of the fields beyond the OpenAI API
//     that the client sends (min_tokens, ignore_eos, continuous usage),
//     and whether it guides decoding to a response_format schema.
//
// The canonical metric names themselves (num_requests_running, ...) are the
// suite's vocabulary and stay in package scrape: a family maps its
// exposition onto them. The stages take a family where they meet the
// server: scrape (WithFamily), server (WithFamily, FamilyOf), profile
// (ParseFor, BuiltinsFor), openai (WithFamily) and check (through the
// profile's batch-cap flag and the snapshot). The shipped families, VLLM
// (the default) and SGLang, are one file each that Registers its value
// (registry.go); VLLMPERF_FAMILY or vllmperf's --family names one (ByName),
// or Detect reads it off a /metrics exposition. A family for a server that
// differs (llm-d-inference-sim, internal/thirdparty/llmd) is a new value,
// not edits in those packages.
// CONTRIBUTING.md's "Recipe: add a server family" is the recipe;
// family_test.go and recipe_test.go in this package, and family_test.go in
// internal/run/pipeline, drive test-only families through every stage.
//
// The package is a leaf: it imports nothing of the pipeline.
package serverfamily

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/vllmperf/vllmperf/internal/suggest"
)

// Family is what one family of vLLM-compatible servers says its own way.
// Build one as a composite literal and call Check; the zero Family is not
// usable.
type Family struct {
	// Name names the family in messages ("vLLM").
	Name string
	// Key selects it (VLLMPERF_FAMILY, --family) and names its profile
	// folder, scenarios/profiles/KEY/: lower case ("vllm"); "" for a
	// family that is not registered.
	Key string
	// Image is the pinned image the container backend runs for it.
	Image string
	// Logs is what the family's start-up log says.
	Logs Logs
	// Metrics is how its /metrics names its series.
	Metrics Metrics
	// Launches are the layouts of a container's command line; the first
	// is the default.
	Launches []Launch
	// Env is set in every container of the family (to keep the server
	// from phoning home); a profile may not set these.
	Env map[string]string
	// Flags are the server flags a profile may name.
	Flags Flags
	// Extras names the request fields beyond the OpenAI API.
	Extras Extras
}

// Metrics is how a family names its series in the Prometheus exposition.
// Names here are without Prefix.
type Metrics struct {
	// Prefix starts every metric name of the family ("vllm:").
	Prefix string
	// Renames maps a name the family exposes (an older or its own) to the
	// canonical name it stands for.
	Renames map[string]string
	// Removed are metrics with no canonical counterpart: reported as
	// ignored, never an error.
	Removed map[string]bool
	// PrefixCachingLabel is the label of cache_config_info whose value
	// ("True"/"False") says whether prefix caching is on; "" when the
	// family does not say.
	PrefixCachingLabel string
	// Missing are canonical metrics the family does not expose (in its
	// default configuration): the checks that need one are NOT_AVAILABLE
	// on it, so a suite against it runs with strict off (ExposesAll).
	Missing []string
}

// ExposesAll reports whether the family exposes every canonical metric the
// checks read, so that a suite against it may run strict (a missing
// metric fails).
func (f *Family) ExposesAll() bool { return len(f.Metrics.Missing) == 0 }

// Launch is one layout of a server's command line in a container.
type Launch struct {
	// Name selects the layout (server.WithEntrypoint, VLLMPERF_ENTRYPOINT).
	Name string
	// Entrypoint replaces the image's ENTRYPOINT; nil keeps the image's own.
	Entrypoint []string
	// ModelFlag is the flag, without its dashes (Dashed adds them), that
	// precedes the model ("model"); "" puts the model first, positional.
	ModelFlag string
	// HostFlag precedes the address to bind ("host"); "" when the server
	// has none and listens on every interface itself.
	HostFlag string
	// PortFlag precedes the port to listen on ("port").
	PortFlag string
	// Always are bare flags (without dashes) the layout passes after the
	// port on every start: what the suite needs the server to do that is
	// off by default (SGLang's "enable-metrics").
	Always []string
	// Use says in a few words when to choose this layout, for messages.
	Use string
}

// Command returns the command line (after the entrypoint) that serves model
// on port with args: the model, the address and port, then args.
func (l Launch) Command(model string, port int, args []string) []string {
	var out []string
	if l.ModelFlag != "" {
		out = append(out, Dashed(l.ModelFlag))
	}
	out = append(out, model)
	if l.HostFlag != "" {
		out = append(out, Dashed(l.HostFlag), "0.0.0.0")
	}
	out = append(out, Dashed(l.PortFlag), strconv.Itoa(port))
	for _, f := range l.Always {
		out = append(out, Dashed(f))
	}
	return append(out, args...)
}

// Dashed is a flag name as a command line writes it: max-num-seqs is
// --max-num-seqs. A family keeps its flags without the dashes (as data),
// and this is the one place that adds them.
func Dashed(name string) string { return "--" + name }

// Logs is what a family's start-up log says that the suite reads.
type Logs struct {
	// KVCacheGiB matches the line that gives the KV cache's size, its
	// first group the size in GiB (vLLM V1's "Available KV cache memory:
	// 1.23 GiB"); nil when the family logs none.
	KVCacheGiB *regexp.Regexp
}

// KVCacheGiB returns the KV cache's size in GiB from the first of lines
// that Logs.KVCacheGiB matches; false when none does (or the family logs
// no such line).
func (f *Family) KVCacheGiB(lines []string) (float64, bool) {
	re := f.Logs.KVCacheGiB
	if re == nil {
		return 0, false
	}
	for _, line := range lines {
		if m := re.FindStringSubmatch(line); len(m) > 1 {
			if gib, err := strconv.ParseFloat(m[1], 64); err == nil && gib > 0 {
				return gib, true
			}
		}
	}
	return 0, false
}

// Flags are the server flags of a family, without their leading dashes.
type Flags struct {
	// Known are the flags a profile may name under flags:.
	Known map[string]bool
	// Negatable take a --no-NAME form: a profile value of false renders
	// it; false for any other boolean flag renders nothing.
	Negatable map[string]bool
	// Reserved are set by the backend that starts the server, each with
	// the reason a profile may not set it.
	Reserved map[string]string
	// BatchCap is the flag that caps how many requests run at once
	// ("max-num-seqs"); "" when the family has none.
	BatchCap string
}

// Extras names the request fields beyond the OpenAI API that the client
// sends; "" for one the family does not take.
type Extras struct {
	// MinTokens is the field for a minimum output length ("min_tokens").
	MinTokens string
	// IgnoreEOS is the field that makes the server generate exactly
	// max_tokens ("ignore_eos").
	IgnoreEOS string
	// ContinuousUsage is the stream_options field that puts cumulative
	// usage on every chunk ("continuous_usage_stats").
	ContinuousUsage string
	// GuidedDecoding says whether the server constrains its output to a
	// request's response_format JSON schema; without it, the structured
	// output of a schema class fails its schema (sample.ErrSchema).
	GuidedDecoding bool
}

// Check reports a family that cannot be used: no name, no prefix, no
// launch layout or one without a port flag, a rename onto itself.
func (f *Family) Check() error {
	switch {
	case f == nil:
		return errors.New("server family: nil")
	case f.Name == "":
		return errors.New("server family: no Name")
	case f.Metrics.Prefix == "":
		return fmt.Errorf("server family %s: no Metrics.Prefix (vLLM's is %q)", f.Name, VLLM.Metrics.Prefix)
	}
	if _, err := f.Launch(""); err != nil {
		return err
	}
	if f.Key != strings.ToLower(strings.TrimSpace(f.Key)) {
		return fmt.Errorf("server family %s: Key %q must be lower case without spaces (it names scenarios/profiles/KEY/)", f.Name, f.Key)
	}
	for _, l := range f.Launches {
		if l.Name == "" || l.PortFlag == "" {
			return fmt.Errorf("server family %s: launch layout %q needs a Name and a PortFlag", f.Name, l.Name)
		}
		for _, flag := range append([]string{l.ModelFlag, l.HostFlag, l.PortFlag}, l.Always...) {
			if strings.HasPrefix(flag, "-") {
				return fmt.Errorf("server family %s: launch layout %q: write flag %q without its dashes (Dashed adds them)", f.Name, l.Name, flag)
			}
		}
	}
	for old, canonical := range f.Metrics.Renames {
		if old == canonical {
			return fmt.Errorf("server family %s: Metrics.Renames maps %q onto itself", f.Name, old)
		}
	}
	return nil
}

// Launch returns the layout named name; "" is the default (the first). The
// error for a name the family lacks lists its layouts.
func (f *Family) Launch(name string) (Launch, error) {
	if len(f.Launches) == 0 {
		return Launch{}, fmt.Errorf("server family %s: no Launches: give at least one command layout", f.Name)
	}
	if name == "" {
		return f.Launches[0], nil
	}
	for _, l := range f.Launches {
		if l.Name == name {
			return l, nil
		}
	}
	uses := make([]string, len(f.Launches))
	for i, l := range f.Launches {
		uses[i] = fmt.Sprintf("%s (%s)", l.Name, l.Use)
	}
	list := uses[len(uses)-1]
	if len(uses) > 1 {
		list = strings.Join(uses[:len(uses)-1], ", ") + " or " + list
	}
	return Launch{}, fmt.Errorf("entrypoint %q: use %s", name, list)
}

// Canonical returns the canonical name, without Prefix, that name is known
// by: it strips Prefix and maps a renamed name to its replacement. Names it
// does not know come back without Prefix and otherwise unchanged.
func (f *Family) Canonical(name string) string {
	name = strings.TrimPrefix(name, f.Metrics.Prefix)
	if n, ok := f.Metrics.Renames[name]; ok {
		return n
	}
	return name
}

// OldNames lists the names, with Prefix, that canonical may be exposed
// under besides its own, sorted.
func (f *Family) OldNames(canonical string) []string {
	var out []string
	for old, n := range f.Metrics.Renames {
		if n == canonical {
			out = append(out, f.Metrics.Prefix+old)
		}
	}
	slices.Sort(out)
	return out
}

// IsRemoved reports whether name (without Prefix) is a metric with no
// canonical counterpart.
func (f *Family) IsRemoved(name string) bool { return f.Metrics.Removed[name] }

// RemovedNames returns Metrics.Removed's names (without Prefix), sorted.
func (f *Family) RemovedNames() []string { return slices.Sorted(maps.Keys(f.Metrics.Removed)) }

// Renames returns a copy of Metrics.Renames.
func (f *Family) Renames() map[string]string { return maps.Clone(f.Metrics.Renames) }

// IsKnownFlag reports whether name (without its leading dashes) is a flag a
// profile may name.
func (f *Family) IsKnownFlag(name string) bool { return f.Flags.Known[name] }

// IsNegatable reports whether name takes a --no-NAME form.
func (f *Family) IsNegatable(name string) bool { return f.Flags.Negatable[name] }

// Reserved returns why a profile may not set name, if it may not.
func (f *Family) Reserved(name string) (string, bool) {
	why, ok := f.Flags.Reserved[name]
	return why, ok
}

// SuggestFlag returns the known flag nearest to name, or "" if none is
// close enough to be a plausible typo.
func (f *Family) SuggestFlag(name string) string {
	return suggest.Closest(name, slices.Collect(maps.Keys(f.Flags.Known)))
}

// OrDefault returns f, or Default when f is nil: the family of a caller
// that named none.
func OrDefault(f *Family) *Family {
	if f == nil {
		return Default
	}
	return f
}

// Default is the family a stage uses when it is given none: VLLM.
var Default = VLLM
