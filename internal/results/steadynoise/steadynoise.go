// Package steadynoise measures whether the steady-state window's figures
// would make the gate's runs less noisy than the whole run's at the same
// GPU time (docs/load-shapes.md, "Does the steady window make the gate
// less noisy? (protocol)").
//
// From a suite's results folder, Write makes two bench files with the same
// runs, points and units: one with the whole run's figures (the bench
// metrics the suite emitted) and one with the same figures over each run's
// steady window (summary.json's steady_metrics, result.SteadyMetrics); a
// run without a window carries its whole run's figures there, as the gate
// would read them with the whole run as fallback. Compare computes each
// profile's minimum detectable effects on both (gate.MinimumEffects) and
// Decide the protocol's verdict.
package steadynoise

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// Units are the units compared: the gate's judged units of a point
// (headline and tail) that a window has (result.SteadyMetrics), in the
// files' order.
var Units = []string{units.TTFTP50, units.TPOTP50, units.E2ELP99, units.TokPerSec, units.TTFTP99, units.TPOTP99, units.ITLP99}

// WindowKey is the configuration key of every line of the two files: which
// window the line's figures cover ("whole run", "steady", or in the steady
// file "whole run: WHY" for a run that fell back to the whole run's).
const WindowKey = "window"

// The windows WindowKey names.
const (
	WindowWhole  = "whole run"
	WindowSteady = "steady"
)

// Files are the two bench files made from one results folder.
type Files struct {
	// Whole has the whole run's figures, Steady the steady window's; the
	// same benchmark lines, in the folder's order.
	Whole, Steady []byte
	// Runs counts the benchmark lines of each; Fallbacks the steady
	// file's lines that carry a whole run's figure.
	Runs, Fallbacks int
}

// Write makes the two files from f: one benchmark line per run of f that
// reports any of Units. The steady file takes each unit from the run's
// steady_metrics, else (no window, or a window without the unit) the
// whole run's, and says so in the line's WindowKey.
func Write(f *results.Folder) (*Files, error) {
	sum := f.Summary
	if !slices.ContainsFunc(sum.Runs, func(r results.Run) bool { return r.SteadyMetrics != nil }) {
		return nil, fmt.Errorf("steadynoise: no run of %s has steady_metrics: the folder was recorded before the suite stored them, or no run had a steady window; record a new folder with this version (docs/load-shapes.md)", f.Dir)
	}
	var whole, steady bytes.Buffer
	ww, sw := benchfmt.NewWriter(&whole), benchfmt.NewWriter(&steady)
	out := &Files{}
	for _, run := range sum.Runs {
		var wv, sv []benchfmt.Value
		var lacks []string
		for _, u := range Units {
			v, ok := run.Metrics[u]
			if !ok {
				continue
			}
			wv = append(wv, benchfmt.Value{Value: v, Unit: u})
			if s, ok := run.SteadyMetrics[u]; ok {
				v = s
			} else {
				lacks = append(lacks, u)
			}
			sv = append(sv, benchfmt.Value{Value: v, Unit: u})
		}
		if len(wv) == 0 {
			continue
		}
		window := WindowSteady
		switch {
		case run.SteadyMetrics == nil:
			window = WindowWhole + ": " + noSteady(run)
		case len(lacks) > 0:
			window = WindowWhole + " for " + strings.Join(lacks, ", ") + ": the steady window has none"
		}
		if window != WindowSteady {
			out.Fallbacks++
		}
		cfg := config(sum.Config[run.Profile])
		name := benchfmt.Name(benchname.Bench + "/" + run.Name)
		if err := ww.Write(&benchfmt.Result{Name: name, Iters: 1, Values: wv, Config: append(slices.Clip(cfg), benchfmt.Config{Key: WindowKey, Value: []byte(WindowWhole), File: true})}); err != nil {
			return nil, fmt.Errorf("steadynoise: %s: %w", run.Name, err)
		}
		if err := sw.Write(&benchfmt.Result{Name: name, Iters: 1, Values: sv, Config: append(slices.Clip(cfg), benchfmt.Config{Key: WindowKey, Value: []byte(window), File: true})}); err != nil {
			return nil, fmt.Errorf("steadynoise: %s: %w", run.Name, err)
		}
		out.Runs++
	}
	if out.Runs == 0 {
		return nil, fmt.Errorf("steadynoise: no run of %s reports any of %s: not a suite's results folder", f.Dir, strings.Join(Units, ", "))
	}
	out.Whole, out.Steady = whole.Bytes(), steady.Bytes()
	return out, nil
}

// config is a profile's configuration lines, by key, less the folder's
// own results.ConfigGPUs (not a bench configuration line).
func config(c map[string]string) []benchfmt.Config {
	var out []benchfmt.Config
	for _, k := range slices.Sorted(maps.Keys(c)) {
		if k == results.ConfigGPUs {
			continue
		}
		out = append(out, benchfmt.Config{Key: k, Value: []byte(c[k]), File: true})
	}
	return out
}

// noSteady is why run has no steady window, as its result's steady_window
// says (one line).
func noSteady(run results.Run) string {
	var r struct {
		Steady struct {
			None string `json:"none"`
		} `json:"steady_window"`
	}
	if err := json.Unmarshal(run.Result, &r); err != nil || r.Steady.None == "" {
		return "no steady window"
	}
	return strings.Join(strings.Fields(r.Steady.None), " ")
}
