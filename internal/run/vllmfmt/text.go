// Package vllmfmt writes one run in vLLM's own formats: a text summary in
// the layout of `vllm bench serve` (WriteText), the JSON that vLLM's
// --save-result writes, with the same keys (WriteJSON), and the raw
// samples as JSON Lines (WriteSamples, read back by ReadSamples).
package vllmfmt

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/run/stats"
)

// textWidth is the width of vLLM's summary block.
const textWidth = 50

// WriteText writes s as a block laid out like `vllm bench serve`'s
// "Serving Benchmark Result", with vllmperf's additions (failures by kind
// with an example message each, interrupted requests, cold-start TTFT, per-token ITL, client queue time, warnings) and, for an
// run with no figures, a "Figures: none" line first. The line states the
// figures, never the verdict: that is the command's, with its exit code
// (an error rate over its limit fails such a run, exit 1; with failures
// allowed it is INCONCLUSIVE, exit 3).
func WriteText(w io.Writer, s *stats.Summary) error {
	bw := bufio.NewWriter(w)
	line := func(label string, value any) {
		var v string
		switch x := value.(type) {
		case float64:
			v = strconv.FormatFloat(x, 'f', 2, 64)
		default:
			v = fmt.Sprint(x)
		}
		fmt.Fprintf(bw, "%-40s %s\n", label, v)
	}
	header := func(title string, fill byte) { fmt.Fprintln(bw, centered(title, fill)) }

	header(" Serving Benchmark Result ", '=')
	if reason, inc := s.Inconclusive(); inc {
		line("Figures:", "none: "+reason)
	}
	line("Successful requests:", s.Completed)
	line("Failed requests:", s.Failed)
	for _, kv := range sortedKinds(s) {
		line("  "+kv.kind+":", kv.n)
		if e, ok := s.ErrorExamples[sample.ErrorKind(kv.kind)]; ok {
			fmt.Fprintf(bw, "    e.g. %s\n", clipText(e.Detail(), maxExampleText))
		}
	}
	if s.Interrupted > 0 {
		line("Interrupted requests:", s.Interrupted)
	}
	line("Benchmark duration (s):", s.Duration.Seconds())
	line("Total input tokens:", s.TotalInputTokens)
	line("Total generated tokens:", s.TotalOutputTokens)
	line("Request throughput (req/s):", s.RequestThroughput)
	if s.SLO.Set() {
		line("Request goodput (req/s):", s.RequestGoodput)
		line("Goodput SLO:", sloText(s.SLO))
	}
	line("Output token throughput (tok/s):", s.OutputThroughput)
	line("Total Token throughput (tok/s):", s.TotalTokenThroughput)
	line("Max concurrent requests:", s.MaxConcurrentRequests)
	if s.ColdTTFTOK {
		line("Cold-start TTFT (ms):", s.ColdTTFT)
	} else {
		line("Cold-start TTFT (ms):", "n/a")
	}
	for _, m := range []struct {
		title, name string
		d           stats.Dist
	}{
		{"Time to First Token", "TTFT", s.TTFT},
		{"Time per Output Token (excl. 1st token)", "TPOT", s.TPOT},
		{"Inter-token Latency", "ITL", s.ITL},
		{"End-to-end Latency", "E2EL", s.E2EL},
		{"Inter-token Latency per Token", "ITL/token", s.TokenITL},
		{"Client Queue Time", "queue time", s.QueueTime},
	} {
		header(m.title, '-')
		if m.d.N == 0 {
			line(fmt.Sprintf("%s (ms):", m.name), "n/a (no samples)")
			continue
		}
		line(fmt.Sprintf("Mean %s (ms):", m.name), m.d.Mean)
		line(fmt.Sprintf("Median %s (ms):", m.name), m.d.Median)
		for _, p := range m.d.Pcts {
			line(fmt.Sprintf("P%s %s (ms):", pctWord(p.P), m.name), p.Value)
		}
	}
	if len(s.Warnings) > 0 {
		header("Warnings", '-')
		for _, w := range s.Warnings {
			fmt.Fprintf(bw, "- %v\n", w)
		}
	}
	header("", '=')
	return bw.Flush()
}

// maxExampleText bounds an error example in the text summary (the JSON
// has it whole).
const maxExampleText = 300

// clipText cuts s to at most n runes, marking the cut.
func clipText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// pctWord names a percentile as vLLM does: 99 → "99", 99.9 → "99.9".
func pctWord(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }

func sloText(slo stats.SLO) string {
	var parts []string
	for _, l := range []struct {
		name string
		d    time.Duration
	}{{"ttft", slo.TTFT}, {"tpot", slo.TPOT}, {"e2el", slo.E2EL}} {
		if l.d > 0 {
			parts = append(parts, fmt.Sprintf("%s ≤ %s ms", l.name, strconv.FormatFloat(float64(l.d)/float64(time.Millisecond), 'f', -1, 64)))
		}
	}
	return strings.Join(parts, ", ")
}
