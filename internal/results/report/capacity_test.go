package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/results"
)

// TestCapacitySection: a folder with a capacity search shows its
// statement and runs in report.md and report.html; the last search of a
// profile and scenario wins.
func TestCapacitySection(t *testing.T) {
	r, err := Load(copyFolder(t, "testdata/results"))
	require.NoError(t, err)
	ms := func(v float64) *float64 { return &v }
	old := results.Capacity{Profile: "basic", Scenario: "slo-capacity", Statement: "an older search"}
	last := results.Capacity{Profile: "basic", Scenario: "slo-capacity", Rep: 1, Over: "rate", Found: true,
		Statement: "16 requests/s (≈ 28 concurrent users) with at least 99% of requests each within TTFT ≤ 500ms and TPOT ≤ 100ms",
		Runs: []results.CapacityRun{
			{Level: 16, Requests: 133, Good: 133, TTFTP99Ms: ms(190.1), TPOTP99Ms: ms(92.6), ReqPerSec: 13.7, Users: 28, WaitingPeak: ms(3), Pass: true},
			{Level: 17.4, Requests: 143, Good: 99, TTFTP99Ms: ms(264.2), TPOTP99Ms: ms(114.2), ReqPerSec: 14, Users: 37, Notes: []string{"short run"}},
			{Level: 64, Requests: 0}, // nothing ended: no P99, no share
		}}
	r.Capacities = LastCapacities(&results.Summary{Capacities: []results.Capacity{old, last}})
	require.Len(t, r.Capacities, 1)

	var md, html bytes.Buffer
	require.NoError(t, Markdown(&md, r))
	require.NoError(t, HTML(&html, r))
	for _, want := range []string{"## Capacity under the SLO", "### basic / slo-capacity", last.Statement + ".",
		"| 16 | 133 | 100.0% | 97.2–100.0% | 3 | 190.1 | 92.6 | 13.70 | 28.0 | PASS |", "| 17.4 | 143 | 69.2% | 61.2–76.2% | – | 264.2 | 114.2 | 14.00 | 37.0 | FAIL | short run |", "| 64 | 0 | – | – | – | – | – |"} {
		assert.Contains(t, md.String(), want)
	}
	assert.NotContains(t, md.String(), "an older search")
	page := html.String()
	for _, want := range []string{`<section id="capacity">`, `href="#capacity"`, "status-FAIL", "within the SLO"} {
		assert.Contains(t, page, want)
	}
	assert.Equal(t, 1, strings.Count(page, last.Statement))
}
