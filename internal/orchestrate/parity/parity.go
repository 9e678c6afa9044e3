// Package parity compares two servers' greedy outputs: the upgrade gate's
// output parity check. The same requests (temperature 0, fixed prompts of
// a scenario point's shape, Requests) go to OLD and NEW (Collect); Compare
// finds, per request, whether the outputs are identical and, when not,
// the position of the first differing token; Report.Check judges the
// shares against thresholds.yaml's parity: (thresholds.Parity).
//
// Why greedy outputs can differ at all: vLLM does not promise batch
// invariance (VLLM_BATCH_INVARIANT is opt-in and in beta), so another
// build's kernels, or another batch, can flip a near-tie of the logits;
// greedy decoding then goes its own way from that token on. Such drift is
// rare per token, so drifting outputs share long prefixes, while a build
// that computes wrongly differs within the first tokens of most outputs.
// The position of the first difference tells the two apart; the share of
// identical outputs alone does not (docs/gate.md, "Output parity").
package parity

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/request/workload"
	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// The prompts' fixed seed and nonce: every side, start and gate sends the
// same texts for one point.
const (
	promptSeed  = 0x5eed
	promptNonce = 0x9a1e
)

// Requests are the parity requests of point p for model: set.Prompts
// requests of the point's classes (its mix, in order), with a fixed seed
// and nonce, temperature 0, the text kept and max_tokens at most
// set.MaxTokens.
func Requests(model string, p scenario.Point, set thresholds.Parity) ([]openai.Request, error) {
	if set.Prompts <= 0 {
		return nil, nil
	}
	mix, err := workload.NewMix(model, promptSeed, promptNonce, p.Classes)
	if err != nil {
		return nil, fmt.Errorf("parity requests of %s: %w", p.Key, err)
	}
	out := make([]openai.Request, set.Prompts)
	for i := range out {
		r := mix.Next(i)
		r.Temperature, r.KeepText = 0, true
		if set.MaxTokens > 0 && (r.MaxTokens == 0 || r.MaxTokens > set.MaxTokens) {
			r.MaxTokens = set.MaxTokens
		}
		r.MinTokens = min(r.MinTokens, r.MaxTokens)
		out[i] = r
	}
	return out, nil
}

// Output is one request's answer on one side.
type Output struct {
	// Text is the generated text.
	Text string
	// Tokens is usage.completion_tokens.
	Tokens int
}

// Collect sends the requests together, to an idle server (one batch,
// the same on both sides: vLLM's greedy outputs can depend on the batch,
// so both sides get the same one), and returns their outputs in request
// order; a failed request is an error naming it, since parity cannot be
// judged without its output.
func Collect(ctx context.Context, c *openai.Client, reqs []openai.Request) ([]Output, error) {
	out := make([]Output, len(reqs))
	errs := make([]error, len(reqs))
	var wg sync.WaitGroup
	for i, r := range reqs {
		wg.Go(func() {
			var s sample.Sample
			c.Send(ctx, r, &s)
			if s.Err != nil {
				errs[i] = fmt.Errorf("parity request %d of %d: %w", i+1, len(reqs), s.Err)
				return
			}
			out[i] = Output{Text: s.Text, Tokens: s.CompletionTokens}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// Tokenizer counts the tokens of a text (the server's POST /tokenize,
// openai.Client.TokenizeText).
type Tokenizer func(ctx context.Context, text string) (int, error)

// Point is one point's comparison.
type Point struct {
	// Name is the point's run name (profile=P/scenario=S/KEY).
	Name string
	// Outputs is the requests compared; Identical how many answered the
	// same text on both sides.
	Outputs, Identical int
	// FirstDiff are the positions of the first differing token of each
	// output that differs, in request order.
	FirstDiff []int
	// Words says the positions count white-space separated words: the
	// server had no /tokenize.
	Words bool
}

// Compare compares one point's outputs, OLD's and NEW's in the same
// request order. The first differing token's position is the token count
// of the common text before it, cut back to the last word boundary (so a
// token split between the two texts is not counted), as tok counts it;
// without /tokenize (openai.ErrNoTokenize) it counts words.
func Compare(ctx context.Context, name string, old, nw []Output, tok Tokenizer) (Point, error) {
	if len(old) != len(nw) {
		return Point{}, fmt.Errorf("parity of %s: %d outputs of OLD, %d of NEW", name, len(old), len(nw))
	}
	p := Point{Name: name, Outputs: len(old)}
	for i := range old {
		if old[i].Text == nw[i].Text {
			p.Identical++
			continue
		}
		prefix := commonPrefix(old[i].Text, nw[i].Text)
		n := 0
		if prefix != "" && !p.Words {
			var err error
			n, err = tok(ctx, prefix)
			switch {
			case errors.Is(err, openai.ErrNoTokenize):
				p.Words = true
			case err != nil:
				return Point{}, fmt.Errorf("parity of %s: %w", name, err)
			}
		}
		if p.Words {
			n = len(strings.Fields(prefix))
		}
		p.FirstDiff = append(p.FirstDiff, n)
	}
	if p.Words {
		// Positions counted before the server turned out to have no
		// /tokenize are tokens: count them all again in words.
		p.FirstDiff = p.FirstDiff[:0]
		for i := range old {
			if old[i].Text != nw[i].Text {
				p.FirstDiff = append(p.FirstDiff, len(strings.Fields(commonPrefix(old[i].Text, nw[i].Text))))
			}
		}
	}
	return p, nil
}

// commonPrefix is the text a and b start with, up to the last white space
// before they differ (the whole of the shorter one when it is a prefix of
// the other and the longer one goes on with a space).
func commonPrefix(a, b string) string {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	for n > 0 && !utf8.RuneStart(a[n-1]) {
		n-- // never end inside a rune
	}
	if n == len(a) && n == len(b) {
		return a
	}
	longer := a
	if len(b) > len(a) {
		longer = b
	}
	if (n == len(a) || n == len(b)) && n < len(longer) {
		if r, _ := utf8.DecodeRuneInString(longer[n:]); unicode.IsSpace(r) {
			return a[:n]
		}
	}
	i := strings.LastIndexFunc(a[:n], unicode.IsSpace)
	if i < 0 {
		return ""
	}
	return a[:i]
}

// Report is the comparison of every point.
type Report struct {
	Points []Point
	// Settings are the limits judged against.
	Settings thresholds.Parity
}

// Totals are the report's counts over all points.
func (r *Report) Totals() (outputs, identical, early int, firstDiff []int) {
	for _, p := range r.Points {
		outputs += p.Outputs
		identical += p.Identical
		firstDiff = append(firstDiff, p.FirstDiff...)
		for _, d := range p.FirstDiff {
			if d < r.Settings.EarlyTokens {
				early++
			}
		}
	}
	return outputs, identical, early, firstDiff
}

// Summary says what was found: "parity: 30 of 32 greedy outputs identical
// (94%); first differing token at position 41 (median of 2; earliest 17,
// profile=basic/scenario=poisson/rate=4); 0 of 32 differ before token 8".
func (r *Report) Summary() string {
	outputs, identical, early, diffs := r.Totals()
	if outputs == 0 {
		return "parity: no greedy outputs compared"
	}
	s := fmt.Sprintf("parity: %d of %d greedy outputs identical (%s)", identical, outputs, pct(identical, outputs))
	if len(diffs) > 0 {
		earliest, where := diffs[0], ""
		for _, p := range r.Points {
			for _, d := range p.FirstDiff {
				if d <= earliest {
					earliest, where = d, p.Name
				}
			}
		}
		sorted := slices.Sorted(slices.Values(diffs))
		s += fmt.Sprintf("; first differing %s at position %d (median of %d; earliest %d, %s)",
			r.unit(), sorted[(len(sorted)-1)/2], len(sorted), earliest, where)
	}
	return s + fmt.Sprintf("; %d of %d differ before %s %d", early, outputs, r.unit(), r.Settings.EarlyTokens)
}

func (r *Report) unit() string {
	for _, p := range r.Points {
		if p.Words {
			return "word"
		}
	}
	return "token"
}

// Check judges the report against its settings: the reasons the upgrade
// fails on parity (none: it passes).
func (r *Report) Check() []string {
	outputs, identical, early, _ := r.Totals()
	if outputs == 0 {
		return nil
	}
	var out []string
	set := r.Settings
	if share := float64(identical) / float64(outputs); share < set.MinIdentical {
		out = append(out, fmt.Sprintf("%s of the greedy outputs are identical, below parity.min_identical %s", pct(identical, outputs), pctOf(set.MinIdentical)))
	}
	if share := float64(early) / float64(outputs); share > set.MaxEarly {
		out = append(out, fmt.Sprintf("%s of the greedy outputs (%d of %d) differ before %s %d, above parity.max_early %s: NEW answers differently from its first tokens on, more than numeric drift does",
			pct(early, outputs), early, outputs, r.unit(), set.EarlyTokens, pctOf(set.MaxEarly)))
	}
	return out
}

func pct(n, of int) string { return pctOf(float64(n) / float64(of)) }

func pctOf(f float64) string { return fmt.Sprintf("%.3g%%", 100*f) }
