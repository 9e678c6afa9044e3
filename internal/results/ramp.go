package results

import (
	"encoding/json"
	"fmt"
)

// Ramp is a ramp-up run's rate windows as its result holds them
// (docs/load-shapes.md): vLLM's ramp_up_* keys and vllmperf's ramp_*.
type Ramp struct {
	Strategy string       `json:"ramp_up_strategy"`
	StartRPS float64      `json:"ramp_up_start_rps"`
	EndRPS   float64      `json:"ramp_up_end_rps"`
	Windows  []RampWindow `json:"ramp_windows"`
	// SLOExit is the offered rate where the windows' P99s left the SLO;
	// Saturation where the achieved throughput stopped following the
	// arrivals; nil when the ramp did not get there.
	SLOExit    *float64 `json:"ramp_slo_exit_rps"`
	Saturation *float64 `json:"ramp_saturation_rps"`
	// Judged counts the windows judged for throughput.
	Judged int `json:"ramp_judged_windows"`
	// SLO holds the P99 limits the windows were held to.
	SLO RampSLO `json:"ramp_slo"`
}

// RampWindow is one rate window of a ramp-up; a figure the window has
// not is nil.
type RampWindow struct {
	FromS    float64  `json:"from_s"`
	ToS      float64  `json:"to_s"`
	Requests int      `json:"requests"`
	Offered  *float64 `json:"offered_rps"`
	Arrived  *float64 `json:"arrived_rps"`
	Achieved *float64 `json:"achieved_rps"`
	TTFTP99  *float64 `json:"p99_ttft_ms"`
	TPOTP99  *float64 `json:"p99_tpot_ms"`
}

// RampSLO is the P99 limits a ramp's windows were held to, in ms (0: none).
type RampSLO struct {
	TTFTMs float64 `json:"ttft_ms"`
	TPOTMs float64 `json:"tpot_ms"`
}

// Ramp returns the run's ramp-up, nil for a run that is not one.
func (r Run) Ramp() (*Ramp, error) {
	if len(r.Result) == 0 {
		return nil, nil
	}
	var probe struct {
		Strategy *string `json:"ramp_up_strategy"`
	}
	if err := json.Unmarshal(r.Result, &probe); err != nil {
		return nil, fmt.Errorf("run %s: its result: %w", r.Name, err)
	}
	if probe.Strategy == nil {
		return nil, nil
	}
	var ramp Ramp
	if err := json.Unmarshal(r.Result, &ramp); err != nil {
		return nil, fmt.Errorf("run %s: its ramp-up: %w", r.Name, err)
	}
	return &ramp, nil
}
