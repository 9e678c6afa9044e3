package engine

import (
	"slices"
	"testing"
)

// TestGreedyOutputIgnoresServerSeed: a greedy request (temperature 0)
// gets the same output tokens, EOS and speculative acceptance on servers
// started with different --sim-seed values, as greedy decoding gives one
// answer to one prompt on a GPU; a sampled request's output changes with
// the seed. The suite's load is greedy, so a speculative profile's
// acceptance is part of the workload, not start-to-start noise.
func TestGreedyOutputIgnoresServerSeed(t *testing.T) {
	t.Parallel()
	// run serves the same prompts on a server seeded with seed and returns
	// every request's output tokens and the accepted draft tokens.
	run := func(seed int64, greedy bool) (outputs [][]int32, accepted float64) {
		cfg := defaultCfg()
		cfg.Seed = seed
		cfg.Jitter = 0
		cfg.SpeculativeConfig = `{"method":"ngram","num_speculative_tokens":4,"prompt_lookup_max":4}`
		sm, err := NewSimulation(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		outputs = make([][]int32, 6)
		for i := range outputs {
			req := Request{PromptTokens: prompt(80, 1000+17*i), MaxTokens: 48, Greedy: greedy}
			if err := sm.Submit(req, func(o Output) { outputs[i] = append(outputs[i], o.Tokens...) }); err != nil {
				t.Fatal(err)
			}
		}
		if err := sm.Run(1_000_000); err != nil {
			t.Fatal(err)
		}
		return outputs, val(sm.e.m.SpecAccepted)
	}
	cases := []struct {
		name     string
		greedy   bool
		wantSame bool
	}{
		{"greedy (temperature 0)", true, true},
		{"sampled", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out1, acc1 := run(1, c.greedy)
			out2, acc2 := run(2, c.greedy)
			same := acc1 == acc2
			for i := range out1 {
				if len(out1[i]) == 0 {
					t.Fatalf("request %d produced no tokens", i)
				}
				same = same && slices.Equal(out1[i], out2[i])
			}
			if same != c.wantSame {
				t.Errorf("seeds 1 and 2: same outputs and acceptance = %v (accepted %v vs %v), want %v", same, acc1, acc2, c.wantSame)
			}
		})
	}
}
