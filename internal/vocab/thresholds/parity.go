package thresholds

import (
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/vllmperf/vllmperf/internal/strictyaml"
)

// Parity says how the upgrade gate compares OLD's and NEW's greedy
// outputs (thresholds.yaml's parity:, top level only), and when their
// divergence fails the upgrade. vLLM does not promise batch invariance:
// the same greedy request can decode differently on two builds, or in
// two batches of one build, when different kernels or reduction orders
// flip a near-tie of the logits; from that token on the outputs go their
// own ways. Such drift is rare per token, so drifting outputs share long
// prefixes; a broken build differs within the first tokens of most
// outputs. The defaults therefore gate where outputs first differ, not
// whether they are identical (docs/gate.md, "Output parity").
type Parity struct {
	// Prompts is the greedy requests sent per point and side (0: no
	// parity check).
	Prompts int
	// MaxTokens caps each output's length (the point's own max_tokens
	// when lower).
	MaxTokens int
	// MinIdentical is the share of outputs that must be identical on
	// both sides (a fraction; 0 reports the share without gating it).
	MinIdentical float64
	// EarlyTokens: an output whose first differing token is at a
	// position below this diverged early.
	EarlyTokens int
	// MaxEarly is the share of outputs allowed to diverge early (a
	// fraction).
	MaxEarly float64
}

// DefaultParity is the shipped thresholds.yaml's parity:.
var DefaultParity = func() (p Parity) { builtin.parity.apply(&p); return p }()

// Parity returns the output parity settings: DefaultParity with what the
// file's parity: sets.
func (s *Set) Parity() Parity {
	p := DefaultParity
	s.parity.apply(&p)
	return p
}

// parityYAML is thresholds.yaml's parity: section.
type parityYAML struct {
	Prompts      *tokens   `yaml:"prompts"`
	MaxTokens    *tokens   `yaml:"max_tokens"`
	MinIdentical *Fraction `yaml:"min_identical"`
	EarlyTokens  *tokens   `yaml:"early_tokens"`
	MaxEarly     *Fraction `yaml:"max_early"`
}

func (y *parityYAML) apply(p *Parity) {
	if y == nil {
		return
	}
	setInt(&p.Prompts, y.Prompts)
	setInt(&p.MaxTokens, y.MaxTokens)
	setFrac(&p.MinIdentical, y.MinIdentical)
	setInt(&p.EarlyTokens, y.EarlyTokens)
	setFrac(&p.MaxEarly, y.MaxEarly)
}

func setInt(dst *int, src *tokens) {
	if src != nil {
		*dst = int(*src)
	}
}

// tokens is a whole number ≥ 0 (a count of requests or tokens).
type tokens int

// UnmarshalYAML reads a whole number ≥ 0.
func (c *tokens) UnmarshalYAML(n *yaml.Node) error {
	v, err := strconv.Atoi(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil || v < 0 {
		return strictyaml.Errorf(n, "%q: want a whole number, 0 or more", n.Value)
	}
	*c = tokens(v)
	return nil
}
