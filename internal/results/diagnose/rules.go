package diagnose

import (
	"fmt"
	"math"
	"slices"

	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// The rules' IDs.
const (
	HighTTFT   = "high-ttft"
	TPOTJitter = "tpot-jitter"
	KVPressure = "kv-pressure"
	SmallBatch = "small-batch"
	ColdStart  = "cold-start"
)

// rules are the seed's bottlenecks, in the seed's order (the cold start
// comes from its TTFT experiment).
var rules = []*Rule{
	{
		ID:    HighTTFT,
		Title: "High TTFT: requests wait for their first token",
		Remedies: []string{
			"chunked prefill (--enable-chunked-prefill with a smaller --max-num-batched-tokens): long prefills are split so they stop holding up the queue and the decodes",
			"prefix caching (--enable-prefix-caching): prompts that share a prefix (system prompt, chat history, RAG template) skip its prefill",
			"prefill/decode disaggregation: prefill on its own instances, so long prompts never block short requests' decode",
		},
		fire: highTTFT,
	},
	{
		ID:    TPOTJitter,
		Title: "TPOT jitter: output tokens arrive unevenly",
		Remedies: []string{
			"batch-size swings: cap the batch (--max-num-seqs) so that the step time stays in a band, or smooth the arrivals",
			"preemptions: give the KV cache more room (fp8 KV cache, higher --gpu-memory-utilization) or run fewer sequences",
			"speculative decoding: tune --speculative-config (fewer num_speculative_tokens when acceptance is low, a better draft), or turn it off for this traffic",
		},
		fire: tpotJitter,
	},
	{
		ID:    KVPressure,
		Title: "KV cache near its ceiling",
		Remedies: []string{
			"fp8 KV cache (--kv-cache-dtype fp8): about twice the tokens in the same memory, at a small accuracy cost to verify",
			"a shorter context (--max-model-len) where the traffic allows it",
			"more memory for the cache: a higher --gpu-memory-utilization, or more GPUs (--tensor-parallel-size)",
		},
		fire: kvPressure,
	},
	{
		ID:    SmallBatch,
		Title: "Low tokens/s with free KV cache and a small running batch",
		Remedies: []string{
			"raise --max-num-seqs (and --max-num-batched-tokens with it): the KV cache has room for the requests that wait",
			"when the traffic itself never fills a batch, speculative decoding makes each step emit more tokens",
		},
		fire: smallBatch,
	},
	{
		ID:    ColdStart,
		Title: "Cold first request",
		Remedies: []string{
			"send warm-up requests after the server starts and before it takes traffic (a readiness probe that sends one completion; vllmperf run --warmup N)",
			"keep the server up: scaling to zero pays this on every start",
		},
		Profiles: []Advice{
			{"every profile", "no vLLM flag removes the warm-up of CUDA kernels and allocations: every profile pays it once, and warm-up requests move it off the users"},
		},
		fire: coldStart,
	},
}

// highTTFT: TTFT p99 of many decode steps, with a waiting queue or long
// prompts behind it.
func highTTFT(x *facts, _ *profileFacts, th thresholds.Diagnosis) reading {
	if x.startup {
		return skip()
	}
	if !has(x.ttftP99) || !has(x.itlMedian) || x.itlMedian <= 0 {
		return lacking("TTFT p99 and the median gap between chunks (no successful request streamed two chunks)")
	}
	steps := x.ttftP99 / x.itlMedian
	if steps < th.HighTTFTSteps {
		return quiet()
	}
	ev := []string{fmt.Sprintf("TTFT p99 %s = %.1f decode steps of %s (the median gap between chunks); high at ≥ %g steps",
		fms(x.ttftP99), steps, fms(x.itlMedian), th.HighTTFTSteps)}
	queue := has(x.waitingShare) && x.waitingShare >= th.WaitingShare
	if queue {
		ev = append(ev, fmt.Sprintf("waiting queue non-empty in %s of the %d sampler points during the load (a queue at ≥ %s): peak %g, mean %.1f requests",
			fpct(x.waitingShare), x.points, fpct(th.WaitingShare), x.waitingPeak, x.waitingMean))
	}
	long := has(x.promptMean) && x.promptMean >= th.LongPromptTokens
	if long {
		ev = append(ev, fmt.Sprintf("prompts average %.0f tokens (long at ≥ %g)", x.promptMean, th.LongPromptTokens))
	}
	if !queue && !long {
		if !has(x.waitingShare) {
			return lacking(fmt.Sprintf("num_requests_waiting during the load: TTFT p99 is %.1f decode steps with short prompts, and without the queue the cause cannot be told", steps))
		}
		return quiet()
	}
	if has(x.queueMean) && has(x.prefillMean) && has(x.serverTTFTMean) && x.serverTTFTMean > 0 {
		ev = append(ev, fmt.Sprintf("server side, mean per request: %s queued, %s in prefill, first token at %s",
			fms(x.queueMean), fms(x.prefillMean), fms(x.serverTTFTMean)))
	}
	return fired(ev)
}

// tpotJitter: per-request TPOT or chunk gaps that vary, and which of the
// seed's causes the metrics show.
func tpotJitter(x *facts, p *profileFacts, th thresholds.Diagnosis) reading {
	if x.startup {
		return skip()
	}
	if x.tpotN < th.MinJitterRequests {
		return lacking(fmt.Sprintf("at least %d requests with a TPOT (a spread of fewer says little)", th.MinJitterRequests))
	}
	var ev []string
	if has(x.tpotCV) && x.tpotCV >= th.TPOTJitterCV {
		ev = append(ev, fmt.Sprintf("per-request TPOT varies: CV %.2f over %d requests (jitter at ≥ %.2f), p50 %s, p99 %s",
			x.tpotCV, x.tpotN, th.TPOTJitterCV, fms(x.tpotP50), fms(x.tpotP99)))
	}
	if x.itlN >= 10*th.MinJitterRequests && has(x.itlCV) && x.itlCV >= th.ITLJitterCV {
		ev = append(ev, fmt.Sprintf("gaps between chunks vary: CV %.2f over %d gaps (stutter at ≥ %.2f), p99 %.1f× the median",
			x.itlCV, x.itlN, th.ITLJitterCV, x.itlP99P50))
	}
	if len(ev) == 0 {
		return quiet()
	}
	causes := jitterCauses(x, p, th)
	if len(causes) == 0 {
		causes = []string{fmt.Sprintf("none of the seed's causes shows: the batch held (running p25 %s, p75 %s), no preemptions, no speculative decoding; look outside the engine (CPU contention, pauses, the network)",
			fnum(x.runningP25), fnum(x.runningP75))}
	}
	return fired(append(ev, causes...))
}

// jitterCauses lists the seed's causes of TPOT jitter that the run shows.
func jitterCauses(x *facts, p *profileFacts, th thresholds.Diagnosis) []string {
	var out []string
	if has(x.runningP75) && x.runningP75 > 0 {
		if swing := (x.runningP75 - x.runningP25) / x.runningP75; swing >= th.BatchSwing {
			out = append(out, fmt.Sprintf("batch-size swings: running requests p25 %g, p75 %g over %d points (a swing of %s; swinging at ≥ %s)",
				x.runningP25, x.runningP75, x.points, fpct(swing), fpct(th.BatchSwing)))
		}
	}
	if has(x.preemptions) && x.preemptions > 0 {
		out = append(out, fmt.Sprintf("preemptions: Δnum_preemptions_total = %g, requests were evicted from the KV cache and recomputed", x.preemptions))
	}
	if has(x.specAccept) {
		line := fmt.Sprintf("speculative decoding: %s of draft tokens accepted, %.2f tokens per chunk", fpct(x.specAccept), x.tokPerChunk)
		median := p.medianAccept()
		switch {
		case x.specAccept < th.SpecAcceptMin:
			line += fmt.Sprintf("; acceptance is low (< %s)", fpct(th.SpecAcceptMin))
		case has(median) && x.specAccept <= median*(1-th.SpecAcceptDrop):
			line += fmt.Sprintf("; acceptance fell below the profile's median %s by ≥ %s", fpct(median), fpct(th.SpecAcceptDrop))
		default:
			line += "; how many drafts a step accepts varies, and each request's TPOT with it"
		}
		out = append(out, line)
	}
	return out
}

// medianAccept is the median speculative acceptance over the profile's
// runs (NaN without speculative decoding).
func (p *profileFacts) medianAccept() float64 {
	var xs []float64
	for _, r := range p.runs {
		if !r.startup && has(r.specAccept) {
			xs = append(xs, r.specAccept)
		}
	}
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// kvPressure: KV-cache usage at the ceiling.
func kvPressure(x *facts, _ *profileFacts, th thresholds.Diagnosis) reading {
	if x.startup {
		return skip()
	}
	if !has(x.kvPeak) {
		return lacking("kv_cache_usage_perc during the load")
	}
	if x.kvPeak < th.KVHigh {
		return quiet()
	}
	ev := []string{fmt.Sprintf("KV-cache usage peaked at %s (near the ceiling at ≥ %s), at or above it in %s of the %d sampler points during the load",
		fpct1(x.kvPeak), fpct(th.KVHigh), fpct(x.kvHighShare), x.points)}
	if has(x.preemptions) && x.preemptions > 0 {
		ev = append(ev, fmt.Sprintf("Δnum_preemptions_total = %g: running requests were evicted and recomputed", x.preemptions))
	}
	if has(x.runningPeak) && has(x.waitingPeak) && x.runningPeak < x.concurrency && x.waitingPeak > 0 {
		ev = append(ev, fmt.Sprintf("running peaked at %g of %g requests in flight while up to %g waited: the cache held them back", x.runningPeak, x.concurrency, x.waitingPeak))
	}
	if c, ok := x.checks["kv_peak"]; ok && c.Status != verdict.Pass {
		ev = append(ev, fmt.Sprintf("check kv_peak %s: %s", c.Status, c.Detail))
	}
	return fired(ev)
}

// smallBatch: requests wait while the running batch is small, the KV cache
// is mostly free and the tokens/s falls short of the offered concurrency.
func smallBatch(x *facts, _ *profileFacts, th thresholds.Diagnosis) reading {
	if x.startup || x.concurrency <= 0 {
		return skip()
	}
	if !has(x.waitingShare) || !has(x.runningPeak) || !has(x.kvPeak) {
		return lacking("num_requests_running, num_requests_waiting and kv_cache_usage_perc during the load")
	}
	if !has(x.tokS) || !has(x.tpotP50) || x.tpotP50 <= 0 {
		return lacking("tokens/s and TPOT p50 (no successful request of two tokens or more)")
	}
	if x.waitingShare < th.WaitingShare || x.runningPeak > th.SmallBatchShare*x.concurrency || x.kvPeak >= th.KVFree {
		return quiet()
	}
	potential := x.concurrency / (x.tpotP50 / 1e3)
	if x.tokS > th.ThroughputShare*potential {
		return quiet()
	}
	return fired([]string{
		fmt.Sprintf("output %.1f tok/s = %s of the %.0f tok/s that %g requests in flight make at the run's TPOT p50 %s (low at ≤ %s)",
			x.tokS, fpct(x.tokS/potential), potential, x.concurrency, fms(x.tpotP50), fpct(th.ThroughputShare)),
		fmt.Sprintf("running batch peaked at %g of %g in flight (small at ≤ %s)", x.runningPeak, x.concurrency, fpct(th.SmallBatchShare)),
		fmt.Sprintf("waiting queue non-empty in %s of %d sampler points (peak %g)", fpct(x.waitingShare), x.points, x.waitingPeak),
		fmt.Sprintf("KV-cache usage peaked at %s (free below %s): the cache has room for a larger batch", fpct1(x.kvPeak), fpct(th.KVFree)),
	})
}

// coldStart: the first request after the server started against the
// profile's warm TTFT.
func coldStart(x *facts, p *profileFacts, th thresholds.Diagnosis) reading {
	if !x.startup {
		return skip()
	}
	if !has(x.coldTTFT) {
		return lacking("the first request's TTFT (it produced no token)")
	}
	warm, from := p.warmTTFT()
	if !has(warm) || warm <= 0 {
		return lacking("a warm run of the same profile to compare the first request with")
	}
	extra := x.coldTTFT - warm
	if x.coldTTFT < th.ColdFactor*warm || extra < ms(th.ColdExtra) {
		return quiet()
	}
	ev := []string{fmt.Sprintf("first request after start: TTFT %s against %s warm (%s) = %.1f× and +%s (cold at ≥ %g× and ≥ +%s)",
		fms(x.coldTTFT), fms(warm), from, x.coldTTFT/warm, fms(extra), th.ColdFactor, fms(ms(th.ColdExtra)))}
	if has(x.queueMean) && has(x.prefillMean) {
		ev = append(ev, fmt.Sprintf("server side: %s queued, %s in prefill: the engine's first step was slow, not the queue", fms(x.queueMean), fms(x.prefillMean)))
	}
	return fired(ev)
}

// warmTTFT is the profile's warm TTFT p50: its short-prompt run at
// concurrency 1 (ttft-tpot), else the lowest TTFT p50 of its other runs,
// and the run it came from.
func (p *profileFacts) warmTTFT() (float64, string) {
	best, from := math.NaN(), ""
	for _, r := range p.runs {
		if r.startup || !has(r.ttftP50) {
			continue
		}
		if pt := benchname.ParsePoint(r.run.Point); pt.Class == "short" && pt.Concurrency == 1 && pt.Rate == "" {
			return r.ttftP50, "TTFT p50 of " + r.run.Name
		}
		if !has(best) || r.ttftP50 < best {
			best, from = r.ttftP50, "lowest TTFT p50 of the profile's runs, "+r.run.Name
		}
	}
	return best, from
}

// fnum writes a count, "?" when missing.
func fnum(v float64) string {
	if !has(v) {
		return "?"
	}
	return fmt.Sprintf("%g", v)
}

func fms(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f ms", v)
	}
	return fmt.Sprintf("%.1f ms", v)
}

func fpct(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) }

func fpct1(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }
