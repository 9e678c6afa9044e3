package engine

import "time"

// encoderCost is the time the vision encoder takes for the images of the
// items p schedules for the first time (each request's once): 2 × Params
// FLOPs a patch at the GPU's prefill efficiency on the encoder.
func (e *Engine) encoderCost(p plan) time.Duration {
	v := e.r.model.Vision
	if v == nil {
		return 0
	}
	patches := 0
	for _, it := range p.items {
		if it.s.req.EncoderPatches > 0 && !it.s.encoded {
			patches += it.s.req.EncoderPatches
			it.s.encoded = true
		}
	}
	if patches == 0 {
		return 0
	}
	flops := 2 * v.Params * float64(patches) / float64(e.r.cfg.TensorParallelSize)
	return secs(flops / (e.r.gpu.PeakFLOPS * e.r.prefillEff))
}
