// Package render writes a gate.Report for people and programs: the brief
// text report (the default, --format text), every row (full), one line a
// benchmark (summary), markdown for a pull request or the job summary,
// and gate.json (JSONReport, which vllmperf report reads back). Report
// wraps a gate.Report with these formats, which makes it the
// verdict.Published a gate command publishes.
//
// It only writes what the comparison decided: it must not judge (no
// statistics, no verdicts of its own) nor read benchmark files, and
// nothing of package gate's may import it.
package render
