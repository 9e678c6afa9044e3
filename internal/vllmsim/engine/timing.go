package engine

import (
	"math"
	"time"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

// stepTime is the roofline timing model for one step:
//
//	GPU path  = StepOverhead + SeqOverhead × sequences + max(compute, memory) + all-reduce + draft cost + LoRA (loraCost)
//	host path = CPUStepOverhead + PerSeqOverhead × sequences
//	step      = (max(GPU path, host path) + guided masks) × slowdown × noise [+ cold start]
//
// compute = (2 × non-embedding params × tokens + 2 × vocab × hidden × logit
// rows + attention FLOPs) / TP / (peak × prefill efficiency of the model's
// hidden size); memory = (weights/TP + KV bytes read and written) /
// (bandwidth × DecodeEfficiency); noise is stepNoise.
func (e *Engine) stepTime(p plan) time.Duration {
	r := e.r
	m, g := r.model, r.gpu
	tp := float64(r.cfg.TensorParallelSize)
	qDim := float64(m.QHeads * m.HeadDim)
	var flops, kvBytes float64
	logits, seqs, drafting, guided := 0, len(p.items), 0, 0
	for _, it := range p.items {
		n := float64(it.n)
		ctx := float64(it.start)
		flops += 4 * float64(m.Layers) * qDim * n * (ctx + n/2) // QK^T and PV
		kvBytes += (ctx + n) * r.kvBytesPerToken
		if it.start+it.n >= len(it.s.tokens) && !it.s.req.Pooling { // pooling has no LM head
			logits += 1 + it.drafts
		}
		if it.drafts > 0 {
			drafting++
		}
		if it.s.req.Guided && it.start+it.n >= len(it.s.tokens) {
			guided++ // the grammar masks the logits this step samples from
		}
	}
	flops += 2*m.NonEmbeddingParams*float64(p.tokens) + 2*float64(m.Vocab)*float64(m.Hidden)*float64(logits)
	flops /= tp
	compute := flops / (g.PeakFLOPS * r.prefillEff)
	targetWeights := m.Params * r.weightByte / tp
	memory := (targetWeights + kvBytes) / (g.MemBandwidth * g.DecodeEfficiency)
	gpu := g.StepOverhead + time.Duration(seqs)*g.SeqOverhead + secs(math.Max(compute, memory)) + r.allReduce(p.tokens)
	host := g.CPUStepOverhead + time.Duration(seqs)*g.PerSeqOverhead
	gpu += e.loraCost(p)    // LoRA kernels (lora.go)
	gpu += e.encoderCost(p) // the vision encoder on new requests' images (vision.go)
	if drafting > 0 {
		d, h := e.draftCost(drafting)
		gpu += d
		host += h
	}
	// The grammar's token masks are computed between scheduling and the
	// forward pass (vLLM V1's EngineCore.step), in series with both paths.
	masks := time.Duration(guided) * r.cfg.GuidedOverhead
	t := time.Duration(float64(max(gpu, host)+masks) * r.cfg.Slowdown * e.stepNoise())
	if !e.warm {
		e.warm = true
		t += r.cfg.ColdStart
	}
	return t
}

// prefillEfficiency is the share of peak FLOP/s prefill reaches on a model
// of hidden size hidden: the preset's PrefillEfficiency from
// PrefillRefHidden up, less below it.
func prefillEfficiency(g presets.GPUPreset, hidden int) float64 {
	return g.PrefillEfficiency * math.Pow(math.Min(1, float64(hidden)/presets.PrefillRefHidden), g.PrefillSmallModelExponent)
}

// The step-time noise: a fast part drawn per step and a slow drift that
// wanders over seconds, both scaled by Config.Jitter. The fast part spreads
// inter-token latencies; the drift (batch-composition changes, clocks, the
// host's other work) spreads TPOT between requests and throughput between
// runs, which per-step noise alone averages away.
const (
	// driftScale is the drift's standard deviation per unit of Jitter.
	driftScale = 0.5
	// driftTime is the drift's correlation time.
	driftTime = 2 * time.Second
)

// stepNoise is the factor a step's time is multiplied by: 1 without
// jitter, else (1 + Jitter·N) × (1 + drift), the drift an Ornstein-Uhlenbeck
// process of standard deviation driftScale·Jitter and correlation time
// driftTime in the engine's clock. Both factors are bounded below, so a step
// never takes less than a tenth of its modelled time.
func (e *Engine) stepNoise() float64 {
	j := e.r.cfg.Jitter
	if j <= 0 {
		return 1
	}
	now := e.clock.Now()
	sd := j * driftScale
	if e.driftAt.IsZero() {
		e.drift = sd * e.jitter.NormFloat64()
	} else if dt := now.Sub(e.driftAt); dt > 0 {
		a := math.Exp(-float64(dt) / float64(driftTime))
		e.drift = e.drift*a + sd*math.Sqrt(1-a*a)*e.jitter.NormFloat64()
	}
	e.driftAt = now
	fast := math.Max(0.2, 1+j*e.jitter.NormFloat64())
	return fast * math.Max(0.5, 1+e.drift)
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
