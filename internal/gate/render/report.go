package render

import (
	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// Report is a gate.Report with its formats: what a gate command
// publishes (a verdict.Published) and writes to gate.json.
type Report struct {
	*gate.Report
}

// Of is rep with its formats.
func Of(rep *gate.Report) *Report { return &Report{Report: rep} }

// Formats lists the names of the report's formats.
var Formats = verdict.FormatNames(Of(&gate.Report{}).Formats())

var _ verdict.Published = (*Report)(nil)

// countIf counts the elements of xs for which keep is true.
func countIf[T any](xs []T, keep func(T) bool) int {
	n := 0
	for _, x := range xs {
		if keep(x) {
			n++
		}
	}
	return n
}
