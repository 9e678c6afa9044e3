package vllmsim

import (
	"hash/fnv"

	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
)

// outputSalt stands for another build's kernels (--sim-output-salt N): a
// greedy output is the same as without the salt up to a position drawn
// from the prompt and N, and differs from there on, as a near-tie of the
// logits flipped by different numerics sends greedy decoding down another
// path. Sampled outputs, guided ones and the engine (its tokens, timing
// and counters) are left alone: only the rendered token ids change.
type outputSalt struct {
	salt  uint64
	from  int // the first position that differs
	vocab int32
	eos   int32
}

// newOutputSalt returns the salt of one request, or nil when it has none:
// no --sim-output-salt, a sampled request or a guided one.
func newOutputSalt(salt int64, req genRequest, vocab int, eos int32) *outputSalt {
	if salt == 0 || !req.greedy || req.guided != nil || vocab < 3 {
		return nil
	}
	h := fnv.New64a()
	var b [8]byte
	put := func(v uint64) {
		for i := range b {
			b[i] = byte(v >> (8 * i))
		}
		_, _ = h.Write(b[:])
	}
	put(uint64(salt))
	for _, t := range req.prompt {
		put(uint64(uint32(t)))
	}
	sum := h.Sum64()
	return &outputSalt{salt: sum, from: int(sum % config.OutputSaltWindow), vocab: int32(vocab), eos: eos}
}

// apply returns toks, the output's tokens from position start on, with
// those at or past the divergence changed: another id of the vocabulary,
// never EOS (an EOS stays, so the output's length and finish reason do
// not change). toks itself is not modified.
func (s *outputSalt) apply(toks []int32, start int) []int32 {
	if s == nil || start+len(toks) <= s.from {
		return toks
	}
	out := make([]int32, len(toks))
	for k, t := range toks {
		pos := start + k
		if pos < s.from || t == s.eos {
			out[k] = t
			continue
		}
		// A shift in [1, vocab-2] moves t to another id; the one that
		// would land on EOS moves one further.
		shift := int32(1 + (s.salt^uint64(pos)*0x9e3779b97f4a7c15)%uint64(s.vocab-2))
		v := (t + shift) % s.vocab
		if v == s.eos {
			v = (v + 1) % s.vocab
			if v == t {
				v = (v + 1) % s.vocab
			}
		}
		out[k] = v
	}
	return out
}
