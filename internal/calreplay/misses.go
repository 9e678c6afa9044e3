package calreplay

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/vllmperf/vllmperf/internal/strictyaml"
)

// Miss is a published figure the timing model does not meet within
// tolerance, with the mechanism it lacks (misses.yaml).
type Miss struct {
	// Row is the calibration row's id, Metric the missed figure.
	Row    string `yaml:"row"`
	Metric Metric `yaml:"metric"`
	// Bound is the largest |error| TestFitRowsWithinTolerance accepts for a
	// fit row's documented miss (a fraction: 0.3 = 30 %).
	Bound float64 `yaml:"bound"`
	// Mechanism says, with numbers, what the model lacks.
	Mechanism string `yaml:"mechanism"`
}

//go:embed misses.yaml
var missesYAML []byte

// Misses reads misses.yaml (strictly: an unknown key is an error naming
// its line).
func Misses() ([]Miss, error) {
	var doc struct {
		Misses []Miss `yaml:"misses"`
	}
	if err := strictyaml.Decode("internal/calreplay/misses.yaml", missesYAML, &doc); err != nil {
		return nil, err
	}
	for i, m := range doc.Misses {
		if m.Row == "" || m.Metric == "" || m.Bound <= 0 || strings.TrimSpace(m.Mechanism) == "" {
			return nil, fmt.Errorf("misses.yaml: entry %d (%q %s) needs row, metric, bound > 0 and mechanism", i+1, m.Row, m.Metric)
		}
	}
	return doc.Misses, nil
}

// Notes joins the mechanisms of the misses by row id, for Run.
func Notes(misses []Miss) map[string]string {
	out := map[string]string{}
	for _, m := range misses {
		if out[m.Row] != "" {
			out[m.Row] += " "
		}
		out[m.Row] += fmt.Sprintf("%s: %s", m.Metric, strings.TrimSpace(m.Mechanism))
	}
	return out
}

// MissList renders the notes of the lines that miss as a Markdown list.
func MissList(lines []Line) string {
	var b strings.Builder
	for _, l := range lines {
		if l.Within() || l.Note == "" {
			continue
		}
		fmt.Fprintf(&b, "- **%s** (%s): %s\n", l.Result.Row.ID, l.Result.Row.Split, l.Note)
	}
	return b.String()
}
