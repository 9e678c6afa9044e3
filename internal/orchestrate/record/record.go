// Package record turns what the run pipeline produces (a result.Result,
// a knee, a capacity search) into the results folder's records (package
// results). It is the edge between the two: results, and the readers of a
// folder (report, diagnose, history), never import the run pipeline or the
// simulator behind it; only the suite, which runs and writes, imports this.
package record

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/vllmperf/vllmperf/internal/orchestrate/capacity"
	"github.com/vllmperf/vllmperf/internal/orchestrate/knee"
	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/run/check"
	"github.com/vllmperf/vllmperf/internal/run/result"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/run/vllmfmt"
)

// Add records one run of res under name in w: its summary entry, samples
// and time series. An error building the record is w's to return at Close.
func Add(w *results.Writer, name, profile string, res *result.Result, metrics map[string]float64, checks []check.Result) {
	rec, err := Run(name, profile, res, metrics, checks)
	if err != nil {
		w.Fail(err)
		return
	}
	w.Add(rec)
}

// Run is res as the folder's record: vLLM's --save-result keys (and per
// class), the bench metrics and the same figures over the steady window,
// the server's deltas and the checks.
func Run(name, profile string, res *result.Result, metrics map[string]float64, checks []check.Result) (results.Record, error) {
	p := res.Point
	run := results.Run{Name: name, Profile: profile, Point: p.Key, Concurrency: p.Concurrency(), Metrics: metrics,
		SteadyMetrics: res.SteadyMetrics(), Checks: checks}
	if p.Scenario != nil {
		run.Scenario = p.Scenario.Name
	}
	if p.Load.Rate > 0 {
		run.Rate = scenario.FormatRate(p.Load.Rate)
	}
	var buf bytes.Buffer
	if err := vllmfmt.WriteJSON(&buf, res.Summary, res.ReportMeta()); err != nil {
		return results.Record{}, err
	}
	run.Result = json.RawMessage(bytes.Clone(bytes.TrimSpace(buf.Bytes())))
	for _, name := range res.ClassNames {
		cs := res.Classes[name]
		if cs == nil {
			continue
		}
		buf.Reset()
		if err := vllmfmt.WriteJSON(&buf, cs, res.ReportMeta()); err != nil {
			return results.Record{}, err
		}
		if run.Classes == nil {
			run.Classes = map[string]json.RawMessage{}
		}
		run.Classes[name] = json.RawMessage(bytes.Clone(bytes.TrimSpace(buf.Bytes())))
	}
	run.Server = serverSide(res)
	for _, w := range res.Warnings {
		run.Warnings = append(run.Warnings, w.Error())
	}
	for _, w := range res.Summary.Warnings {
		run.Warnings = append(run.Warnings, w.Error())
	}
	return results.Record{Run: run, Samples: res.Samples(), Series: series(res)}, nil
}

// Capacity is a capacity search as the folder's record.
func Capacity(profile, scenario string, r *capacity.Result) results.Capacity {
	c := results.Capacity{Profile: profile, Scenario: scenario, Over: string(r.Config.Mode), Found: r.Found, Statement: r.Statement(),
		OutOfReach: r.OutOfReach, Borderline: r.Borderline, Runs: []results.CapacityRun{}}
	for _, t := range r.Trials {
		run := results.CapacityRun{Level: t.Level, Requests: t.Requests, Good: t.Good, ReqPerSec: t.ReqPerSec, Users: t.Users, Pass: t.Pass, Notes: t.Notes}
		if t.HasP99 {
			run.TTFTP99Ms, run.TPOTP99Ms = &t.TTFTP99, &t.TPOTP99
		}
		if t.HasWaiting {
			run.WaitingPeak = &t.WaitingPeak
		}
		c.Runs = append(c.Runs, run)
	}
	return c
}

// Knee is a sweep's knee as the folder's record.
func Knee(profile, scenario string, k knee.Result) results.Knee {
	kj := results.Knee{Profile: profile, Scenario: scenario, Knee: k.Knee, Saturation: k.Saturation, SLOMax: k.SLOMax,
		Recommended: k.Recommended, Explanation: k.Explanation, Steps: []results.Step{}}
	for _, s := range k.Steps {
		kj.Steps = append(kj.Steps, results.Step{From: s.From, To: s.To, Gain: s.Gain, LatencyGrowth: s.LatencyGrowth, Saturated: s.Saturated})
	}
	return kj
}

func serverSide(res *result.Result) results.Server {
	s := results.Server{DrainWaitMS: float64(res.DrainWait) / float64(time.Millisecond)}
	if res.ScrapeErr != nil {
		s.ScrapeError = res.ScrapeErr.Error()
	}
	if res.Series != nil {
		s.Series = res.Series.Summary()
	}
	d := res.Delta
	if d == nil {
		return s
	}
	for _, name := range d.Names() {
		if v, err := d.Counter(name); err == nil {
			if s.Counters == nil {
				s.Counters = map[string]float64{}
			}
			s.Counters[name] = v
			continue
		}
		h, err := d.Histogram(name)
		if err != nil {
			continue
		}
		hd := results.HistogramDelta{Count: h.Count, Sum: h.Sum}
		if v, err := h.Mean(); err == nil {
			hd.Mean = &v
		}
		if v, err := h.Quantile(0.5); err == nil {
			hd.P50 = &v
		}
		if v, err := h.Quantile(0.99); err == nil {
			hd.P99 = &v
		}
		if s.Histograms == nil {
			s.Histograms = map[string]results.HistogramDelta{}
		}
		s.Histograms[name] = hd
	}
	return s
}

// series are res's sampler points, timed from the measured phase's start;
// nil when no sampler ran.
func series(res *result.Result) []results.SeriesLine {
	if res.Series == nil {
		return nil
	}
	out := make([]results.SeriesLine, 0, len(res.Series.Points))
	for _, p := range res.Series.Points {
		out = append(out, results.SeriesLine{T: p.At.Sub(res.Load.Start).Seconds(), Running: p.Running, Waiting: p.Waiting,
			KVUsage: p.KVUsage, GenTokS: p.GenerationTokensPerSec, PromptTS: p.PromptTokensPerSec})
	}
	return out
}
