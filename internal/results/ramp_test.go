package results

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRunRamp: a ramp-up's keys read back from its result; a run that is
// not a ramp has none; a broken ramp is an error naming the run.
func TestRunRamp(t *testing.T) {
	for _, tc := range []struct {
		name, result string
		windows      int    // -1: no ramp
		err          string // "" for none
	}{
		{"ramp", `{"ramp_up_strategy":"linear","ramp_up_start_rps":1,"ramp_up_end_rps":8,"ramp_windows":[{"offered_rps":1.5,"arrived_rps":1.4,"achieved_rps":1.3,"requests":10,"p99_ttft_ms":null}],"ramp_slo_exit_rps":null,"ramp_saturation_rps":6,"ramp_judged_windows":0,"ramp_slo":{"ttft_ms":500,"tpot_ms":100}}`, 1, ""},
		{"not a ramp", `{"request_rate":4}`, -1, ""},
		{"no result", ``, -1, ""},
		{"broken", `{"ramp_up_strategy":"linear","ramp_windows":{}}`, -1, "run r: its ramp-up"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Run{Name: "r", Result: json.RawMessage(tc.result)}
			got, err := r.Ramp()
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("error = %v, want %q", err, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			case tc.windows < 0 && got != nil:
				t.Errorf("ramp = %+v, want none", got)
			case tc.windows >= 0 && (got == nil || len(got.Windows) != tc.windows):
				t.Errorf("ramp = %+v, want %d windows", got, tc.windows)
			case tc.windows >= 0 && (got.SLOExit != nil || got.Saturation == nil || *got.Saturation != 6 || got.SLO.TTFTMs != 500 || got.Windows[0].TTFTP99 != nil || *got.Windows[0].Arrived != 1.4):
				t.Errorf("ramp = %+v: its rates, SLO or window figures misread", got)
			}
		})
	}
}
