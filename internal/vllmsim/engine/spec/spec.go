package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
)

// Config is the parsed --speculative-config.
type Config struct {
	Method               string `json:"method"`
	Model                string `json:"model,omitempty"`
	NumSpeculativeTokens int    `json:"num_speculative_tokens"`
	PromptLookupMax      int    `json:"prompt_lookup_max,omitempty"`
	PromptLookupMin      int    `json:"prompt_lookup_min,omitempty"`
	DraftTPSize          int    `json:"draft_tensor_parallel_size,omitempty"`
	// AcceptanceRate is the simulator's knob (JSON key "sim_acceptance_rate"):
	// the probability that each draft position is accepted given the previous
	// one was. Mean accepted tokens per step = Σ_{i=1..k} rate^i.
	AcceptanceRate float64 `json:"sim_acceptance_rate"`
}

// draftModelMethods are the methods that need a draft "model".
var draftModelMethods = []string{"draft_model", "eagle", "eagle3", "medusa", "mlp_speculator"}

var specMethods = []string{"draft_model", "eagle", "eagle3", "medusa", "mlp_speculator", "mtp", "deepseek_mtp", "ngram", "suffix"}

// specKnownKeys are the keys of vLLM's SpeculativeConfig the simulator
// accepts; the ones it does not model are accepted and ignored.
var specKnownKeys = map[string]bool{
	"method": true, "model": true, "num_speculative_tokens": true, "prompt_lookup_max": true,
	"prompt_lookup_min": true, "draft_tensor_parallel_size": true, "sim_acceptance_rate": true,
	"quantization": true, "max_model_len": true, "revision": true, "code_revision": true,
	"disable_by_batch_size": true, "disable_padded_drafter_batch": true, "speculative_token_tree": true,
	"draft_model": true, "acceptance_method": true, "enforce_eager": true,
}

// DefaultAcceptanceRate is the per-position draft acceptance probability
// used when the speculative config has no sim_acceptance_rate.
const DefaultAcceptanceRate = 0.7

// The bounds and defaults of the speculative config's numbers.
const (
	// maxSpeculativeTokens bounds num_speculative_tokens in the simulator.
	maxSpeculativeTokens = 32
	// defaultPromptLookup is vLLM's prompt_lookup_max and _min for ngram.
	defaultPromptLookup = 5
)

// specError is a --speculative-config problem; the engine's checks put
// the flag before it.
func specError(format string, a ...any) error {
	return fmt.Errorf(format, a...)
}

// Parse parses vLLM's --speculative-config JSON. An empty
// string means speculative decoding is off (nil, nil). An error says what
// is wrong without naming the flag.
func Parse(s string) (*Config, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	sc, err := decodeSpec(s)
	if err != nil {
		return nil, err
	}
	if err := sc.inferMethod(); err != nil {
		return nil, err
	}
	if err := sc.check(); err != nil {
		return nil, err
	}
	return sc, nil
}

// decodeSpec decodes the JSON, refusing keys vLLM does not have.
func decodeSpec(s string) (*Config, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return nil, specError("invalid JSON object: %v (want e.g. '{\"method\":\"ngram\",\"num_speculative_tokens\":5,\"prompt_lookup_max\":5}')", err)
	}
	var unknown []string
	for k := range raw {
		if !specKnownKeys[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		known := slices.Sorted(maps.Keys(specKnownKeys))
		return nil, specError("unknown key(s) %s; known keys: %s", strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	// SpecConfig names the embedded field as the type was named when it
	// lived in package engine, so that a decode error reads as it did
	// ("Go struct field .SpecConfig.num_speculative_tokens").
	type SpecConfig = Config
	sc := &Config{AcceptanceRate: -1}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	if err := dec.Decode(&struct {
		*SpecConfig
		// ignored keys may have any type
		Quantization any `json:"quantization"`
		MaxModelLen  any `json:"max_model_len"`
		Revision     any `json:"revision"`
		CodeRevision any `json:"code_revision"`
		DisableBy    any `json:"disable_by_batch_size"`
		DisablePad   any `json:"disable_padded_drafter_batch"`
		Tree         any `json:"speculative_token_tree"`
		DraftModel   any `json:"draft_model"`
		AccMethod    any `json:"acceptance_method"`
		Eager        any `json:"enforce_eager"`
	}{SpecConfig: sc}); err != nil {
		return nil, specError("%v", err)
	}
	return sc, nil
}

// inferMethod sets Method from the draft model's name when absent, as vLLM
// does, and checks it.
func (sc *Config) inferMethod() error {
	if sc.Method == "" {
		switch {
		case sc.Model == "":
			return specError("give \"method\" (one of %s) or a draft \"model\"", strings.Join(specMethods, ", "))
		case strings.Contains(strings.ToLower(sc.Model), "eagle3"):
			sc.Method = "eagle3"
		case strings.Contains(strings.ToLower(sc.Model), "eagle"):
			sc.Method = "eagle"
		default:
			sc.Method = "draft_model"
		}
	}
	sc.Method = strings.ToLower(sc.Method)
	if !slices.Contains(specMethods, sc.Method) {
		return specError("unknown method %q; use one of %s", sc.Method, strings.Join(specMethods, ", "))
	}
	return nil
}

// check applies the bounds and fills the defaults of the numbers.
func (sc *Config) check() error {
	if sc.NumSpeculativeTokens <= 0 {
		return specError("num_speculative_tokens must be a positive integer (got %d)", sc.NumSpeculativeTokens)
	}
	if sc.NumSpeculativeTokens > maxSpeculativeTokens {
		return specError("num_speculative_tokens %d is too large for the simulator (at most %d)", sc.NumSpeculativeTokens, maxSpeculativeTokens)
	}
	if slices.Contains(draftModelMethods, sc.Method) && sc.Model == "" {
		return specError("method %q needs a draft \"model\"", sc.Method)
	}
	if sc.Method == "ngram" {
		if sc.PromptLookupMax == 0 && sc.PromptLookupMin == 0 {
			sc.PromptLookupMax, sc.PromptLookupMin = defaultPromptLookup, defaultPromptLookup
		} else if sc.PromptLookupMin == 0 {
			sc.PromptLookupMin = sc.PromptLookupMax
		} else if sc.PromptLookupMax == 0 {
			sc.PromptLookupMax = sc.PromptLookupMin
		}
		if sc.PromptLookupMin < 1 || sc.PromptLookupMin > sc.PromptLookupMax {
			return specError("need 1 <= prompt_lookup_min (%d) <= prompt_lookup_max (%d)", sc.PromptLookupMin, sc.PromptLookupMax)
		}
	}
	if sc.AcceptanceRate == -1 {
		sc.AcceptanceRate = DefaultAcceptanceRate
	}
	if sc.AcceptanceRate < 0 || sc.AcceptanceRate > 1 || math.IsNaN(sc.AcceptanceRate) {
		return specError("sim_acceptance_rate must be in [0, 1] (got %v)", sc.AcceptanceRate)
	}
	return nil
}
