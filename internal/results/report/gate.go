package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vllmperf/vllmperf/internal/gate/render"
)

// GateFile is the gate's verdict saved in a results folder: the output of
// `vllmperf gate --format json` (make bench writes it there).
const GateFile = "gate.json"

// ReadGate reads dir's gate.json; it returns nil and no error when the
// folder has none.
func ReadGate(dir string) (*render.JSONReport, error) {
	path := filepath.Join(dir, GateFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	var g render.JSONReport
	if err := json.Unmarshal(data, &g); err != nil {
		return nil, fmt.Errorf("report: %s: %w (it should be the output of vllmperf gate --format json)", path, err)
	}
	if g.Result == "" || g.Rows == nil {
		return nil, fmt.Errorf("report: %s has no \"result\" or \"rows\": it is not the output of vllmperf gate --format json", path)
	}
	return &g, nil
}
