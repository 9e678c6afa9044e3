package spec

import (
	"strings"
	"testing"
)

// TestParse: vLLM's --speculative-config, each problem's message.
func TestParse(t *testing.T) {
	tests := []struct {
		name, in string
		method   string
		k        int
		wantErr  string
	}{
		{"off", "", "", 0, ""}, // empty = off
		{"ngram", `{"method":"ngram","num_speculative_tokens":5,"prompt_lookup_max":5}`, "ngram", 5, ""},                                          // the seed's example
		{"draft model", `{"model":"Qwen/Qwen3-0.6B","num_speculative_tokens":2}`, "draft_model", 2, ""},                                           // method inferred
		{"eagle by name", `{"model":"yuhuili/EAGLE-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}`, "eagle", 3, ""},                            // method inferred from the name
		{"bad json", `{"method":`, "", 0, "invalid JSON"},                                                                                         // truncated
		{"unknown method", `{"method":"magic","num_speculative_tokens":2}`, "", 0, `unknown method "magic"; use one of`},                          // names the methods
		{"unknown key", `{"method":"ngram","num_speculative_tokens":2,"num_spec":3}`, "", 0, "unknown key(s) num_spec"},                           // typo
		{"no k", `{"method":"ngram"}`, "", 0, "num_speculative_tokens must be a positive integer"},                                                // k missing
		{"no method", `{"num_speculative_tokens":2}`, "", 0, `give "method"`},                                                                     // neither method nor model
		{"bad rate", `{"method":"ngram","num_speculative_tokens":2,"sim_acceptance_rate":1.5}`, "", 0, "sim_acceptance_rate"},                     // out of range
		{"eagle without model", `{"method":"eagle","num_speculative_tokens":2}`, "", 0, `needs a draft "model"`},                                  // eagle head needed
		{"wrong type", `{"method":"ngram","num_speculative_tokens":"5"}`, "", 0, "num_speculative_tokens"},                                        // string for int
		{"lookup range", `{"method":"ngram","num_speculative_tokens":2,"prompt_lookup_min":6,"prompt_lookup_max":3}`, "", 0, "prompt_lookup_min"}, // min > max
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := Parse(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.method == "" {
				if sc != nil {
					t.Fatalf("got %+v, want nil", sc)
				}
				return
			}
			if sc.Method != tt.method || sc.NumSpeculativeTokens != tt.k {
				t.Errorf("got method %q k %d, want %q %d", sc.Method, sc.NumSpeculativeTokens, tt.method, tt.k)
			}
		})
	}
}
