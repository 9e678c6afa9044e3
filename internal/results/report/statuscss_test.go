package report

import (
	"regexp"
	"testing"

	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// TestStatusColours: every verdict word the HTML pages mark up has its
// colour rule in common.html.tmpl, as package verdict spells it: a
// check's or an outcome's status (class status-WORD) and a change point's
// kind (class verdict-WORD). A word renamed in verdict fails here instead
// of losing its colour.
func TestStatusColours(t *testing.T) {
	t.Parallel()
	for _, class := range []string{
		"status-" + string(verdict.Pass),
		"status-" + string(verdict.Fail),
		"status-" + string(verdict.Invalid),
		"status-" + string(verdict.NotAvailable),
		"status-" + string(verdict.Inconclusive),
		"status-" + verdict.Missing,
		"verdict-" + verdict.Regression,
		"verdict-" + verdict.Improvement,
		"verdict-" + verdict.Missing,
		"verdict-" + string(verdict.Inconclusive),
	} {
		rule := regexp.MustCompile(`(^|[\s,])\.` + regexp.QuoteMeta(class) + `[\s,{]`)
		if !rule.MatchString(commonSource) {
			t.Errorf("common.html.tmpl has no colour rule for .%s", class)
		}
	}
}
