package cliflags

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestJoinMultiValues(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in, want []string
	}{
		{"space-separated values join", []string{"run", "--lora-modules", "a", "b", "--concurrency", "4"}, []string{"run", "--lora-modules=a,b", "--concurrency", "4"}},
		{"the last flag's values run to the end", []string{"--lora-modules", "a", "b"}, []string{"--lora-modules=a,b"}},
		{"the = form stays", []string{"--lora-modules=a,b", "x"}, []string{"--lora-modules=a,b", "x"}},
		{"no value is left for pflag to report", []string{"--lora-modules", "--quiet"}, []string{"--lora-modules", "--quiet"}},
		{"after -- nothing is rewritten", []string{"--", "--lora-modules", "a"}, []string{"--", "--lora-modules", "a"}},
		{"other flags stay", []string{"--model", "m", "x"}, []string{"--model", "m", "x"}},
	} {
		assert.Equal(t, tc.want, JoinMultiValues(tc.in), tc.name)
	}
}
