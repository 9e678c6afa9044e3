package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// GateFile is the gate's verdict saved in a results folder: the output of
// `vllmperf gate --format json` (make bench writes it there).
const GateFile = "gate.json"

// Gate is the part of gate.json the report shows (its shape is package
// gate's WriteJSON; keys the report does not show are ignored).
type Gate struct {
	Baseline   string `json:"baseline"`
	New        string `json:"new"`
	Thresholds string `json:"thresholds"`
	// Result is PASS, FAIL or INCONCLUSIVE; Summary the headline.
	Result       string      `json:"result"`
	ExitCode     int         `json:"exit_code"`
	Summary      string      `json:"summary"`
	Rows         []GateRow   `json:"rows"`
	Checks       []GateCheck `json:"checks"`
	OnlyBaseline []string    `json:"only_baseline"`
	OnlyNew      []string    `json:"only_new"`
	Warnings     []string    `json:"warnings"`
}

// GateRow is one compared metric of one benchmark.
type GateRow struct {
	Name           string   `json:"name"`
	Unit           string   `json:"unit"`
	BaselineMedian *float64 `json:"baseline_median"`
	BaselineN      int      `json:"baseline_n"`
	NewMedian      *float64 `json:"new_median"`
	NewN           int      `json:"new_n"`
	DeltaPct       *float64 `json:"delta_pct"`
	PHolm          *float64 `json:"p_holm"`
	Verdict        string   `json:"verdict"`
	Reason         string   `json:"reason"`
}

// GateCheck is an absolute limit the gate tested on the new results.
type GateCheck struct {
	Kind   string   `json:"kind"`
	Name   string   `json:"name"`
	Unit   string   `json:"unit"`
	Limit  string   `json:"limit"`
	Value  *float64 `json:"value"`
	Status string   `json:"status"`
	Reason string   `json:"reason"`
}

// The gate's verdicts that need no attention: the report lists the other
// rows first and counts these.
var quietVerdicts = []string{"NO CHANGE", "NOT GATED"}

// Notable returns the rows whose verdict is not NO CHANGE or NOT GATED.
func (g *Gate) Notable() []GateRow {
	var out []GateRow
	for _, r := range g.Rows {
		if !slices.Contains(quietVerdicts, r.Verdict) {
			out = append(out, r)
		}
	}
	return out
}

// ReadGate reads dir's gate.json; it returns nil and no error when the
// folder has none.
func ReadGate(dir string) (*Gate, error) {
	path := filepath.Join(dir, GateFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	var g Gate
	if err := json.Unmarshal(data, &g); err != nil {
		return nil, fmt.Errorf("report: %s: %w (it should be the output of vllmperf gate --format json)", path, err)
	}
	if g.Result == "" || g.Rows == nil {
		return nil, fmt.Errorf("report: %s has no \"result\" or \"rows\": it is not the output of vllmperf gate --format json", path)
	}
	return &g, nil
}
