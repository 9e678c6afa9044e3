package engine

import (
	"math"
	"time"
)

// stepTime is the roofline timing model for one step:
//
//	GPU path  = StepOverhead + max(compute, memory) + all-reduce + draft cost
//	host path = CPUStepOverhead + PerSeqOverhead × sequences
//	step      = max(GPU path, host path) × slowdown × (1 + jitter·N(0,1)) [+ cold start]
//
// compute = (2 × non-embedding params × tokens + 2 × vocab × hidden × logit
// rows + attention FLOPs) / TP / (peak × PrefillEfficiency); memory =
// (weights/TP + KV bytes read and written) / (bandwidth × DecodeEfficiency).
func (e *Engine) stepTime(p plan) time.Duration {
	r := e.r
	m, g := r.model, r.gpu
	tp := float64(r.cfg.TensorParallelSize)
	qDim := float64(m.QHeads * m.HeadDim)
	var flops, kvBytes float64
	logits, seqs, drafting := 0, len(p.items), 0
	for _, it := range p.items {
		n := float64(it.n)
		ctx := float64(it.start)
		flops += 4 * float64(m.Layers) * qDim * n * (ctx + n/2) // QK^T and PV
		kvBytes += (ctx + n) * r.kvBytesPerToken
		if it.start+it.n >= len(it.s.tokens) {
			logits += 1 + it.drafts
		}
		if it.drafts > 0 {
			drafting++
		}
	}
	flops += 2*m.NonEmbeddingParams*float64(p.tokens) + 2*float64(m.Vocab)*float64(m.Hidden)*float64(logits)
	flops /= tp
	compute := flops / (g.PeakFLOPS * g.PrefillEfficiency)
	targetWeights := m.Params * r.weightByte / tp
	memory := (targetWeights + kvBytes) / (g.MemBandwidth * g.DecodeEfficiency)
	gpu := g.StepOverhead + secs(math.Max(compute, memory)) + r.allReduce(p.tokens)
	host := g.CPUStepOverhead + time.Duration(seqs)*g.PerSeqOverhead
	if drafting > 0 {
		d, h := e.draftCost(drafting)
		gpu += d
		host += h
	}
	t := max(gpu, host)
	f := r.cfg.Slowdown
	if r.cfg.Jitter > 0 {
		f *= math.Max(0.2, 1+r.cfg.Jitter*e.jitter.NormFloat64())
	}
	t = time.Duration(float64(t) * f)
	if !e.warm {
		e.warm = true
		t += r.cfg.ColdStart
	}
	return t
}

// Draft proposal costs per step, as fractions of the target's fixed step
// overhead: a separate draft model runs k small forward passes; EAGLE/MTP/
// Medusa heads are about one layer; n-gram lookup is host work only.
const (
	draftModelLaunchFrac = 0.5
	draftHeadLaunchFrac  = 0.1
	ngramPerSeq          = 30 * time.Microsecond
)

// draftCost returns the (GPU, host) time of proposing k drafts for n sequences.
func (e *Engine) draftCost(n int) (gpu, host time.Duration) {
	r := e.r
	sc := r.spec
	k := float64(sc.NumSpeculativeTokens)
	bw := r.gpu.MemBandwidth * r.gpu.DecodeEfficiency
	switch sc.Method {
	case "ngram", "suffix":
		return 0, time.Duration(n) * ngramPerSeq
	case "draft_model":
		d := r.draft
		per := time.Duration(float64(r.gpu.StepOverhead)*draftModelLaunchFrac) + secs(d.Params*r.weightByte/bw)
		return time.Duration(k * float64(per)), 0
	default: // eagle, eagle3, medusa, mlp_speculator, mtp, deepseek_mtp: about one extra layer plus the LM head
		m := r.model
		headBytes := (m.NonEmbeddingParams/float64(m.Layers) + float64(m.Vocab*m.Hidden)) * r.weightByte
		per := time.Duration(float64(r.gpu.StepOverhead)*draftHeadLaunchFrac) + secs(headBytes/bw)
		return time.Duration(k * float64(per)), 0
	}
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// allReduce is the per-step cost of the tensor-parallel all-reduces.
func (r *resolved) allReduce(tokens int) time.Duration {
	tp := r.cfg.TensorParallelSize
	if tp <= 1 {
		return 0
	}
	// Two all-reduces per layer of tokens × hidden activations; ring all-reduce moves 2(tp-1)/tp of the data.
	bytes := 2 * float64(r.model.Layers) * float64(tokens) * float64(r.model.Hidden) * r.weightByte * 2 * float64(tp-1) / float64(tp)
	lat := time.Duration(2*r.model.Layers) * r.gpu.AllReduceLatency
	return lat + time.Duration(bytes/r.gpu.InterconnectBandwidth*float64(time.Second))
}
