package runflags

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/internal/run/pipeline"
)

// LoRAFlags are a run's LoRA flag: --lora-modules, as vllm bench serve
// takes it.
type LoRAFlags struct {
	Modules []string
}

// Register defines the flag on f.
func (l *LoRAFlags) Register(f *pflag.FlagSet) {
	f.StringSliceVar(&l.Modules, "lora-modules", nil, "LoRA adapters the server serves (vLLM --lora-modules names), space- or comma-separated: each request names one, drawn at random with --seed, and the summary has a block per adapter")
}

// check refuses an empty or repeated adapter name.
func (l *LoRAFlags) check() error {
	for i, m := range l.Modules {
		if strings.TrimSpace(m) == "" {
			return fmt.Errorf("--lora-modules: an empty adapter name: give the names the server was started with (vLLM --lora-modules NAME=PATH)")
		}
		if slices.Contains(l.Modules[:i], m) {
			return fmt.Errorf("--lora-modules: %q is given twice: name each adapter once", m)
		}
	}
	return nil
}

// options are Run's options for the flag.
func (l *LoRAFlags) options() []pipeline.Option {
	if len(l.Modules) == 0 {
		return nil
	}
	return []pipeline.Option{pipeline.WithLoRAModules(l.Modules...)}
}
