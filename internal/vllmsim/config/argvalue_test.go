package config

import "testing"

func TestArgValue(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		args []string
		flag string
		want string
		ok   bool
	}{
		{"absent", []string{"--sim-slowdown", "1.1"}, "sim-seed", "", false},
		{"separate value", []string{"--sim-seed", "7"}, "sim-seed", "7", true},
		{"joined value", []string{"--sim-gpu=a100"}, "sim-gpu", "a100", true},
		{"underscores as argparse reads them", []string{"--sim_gpu", "l40s"}, "sim-gpu", "l40s", true},
		{"the last one wins", []string{"--sim-gpu", "a100", "--sim-gpu=h100"}, "sim-gpu", "h100", true},
		{"a value is not a flag", []string{"--model", "--sim-seed"}, "sim-seed", "", false},
		{"read up to a bad argument", []string{"--sim-seed", "3", "--sim-jitter", "x"}, "sim-seed", "3", true},
	} {
		got, ok := ArgValue(tt.args, tt.flag)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: ArgValue(%q, %q) = %q, %v; want %q, %v", tt.name, tt.args, tt.flag, got, ok, tt.want, tt.ok)
		}
	}
}
