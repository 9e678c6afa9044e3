package vllmsim

import (
	"fmt"
	"slices"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
)

// loraFlags are vllm serve's LoRA flags (engine.LoRAConfig).
var loraFlags = []flagSpec{
	{name: "enable-lora", kind: kindNegBool, help: "serve LoRA adapters (--lora-modules); each batch holds at most --max-loras of them",
		setB: func(o *Options, b bool) { o.EnableLoRA = b }},
	{name: "lora-modules", kind: kindMulti, meta: "NAME=PATH [NAME=PATH ...]", help: `LoRA adapters, as NAME=PATH or '{"name": ..., "path": ..., "base_model_name": ...}'; requests name the adapter as their model (needs --enable-lora; the simulator reads no file)`,
		setM: func(o *Options, v []string) error {
			for _, s := range v {
				m, err := engine.ParseLoRAModule(s)
				if err != nil {
					return err
				}
				o.LoRAModules = append(o.LoRAModules, m)
			}
			return nil
		}},
	{name: "max-loras", meta: "N", help: fmt.Sprintf("most distinct adapters in one batch: a request for another waits (default %d)", engine.DefaultMaxLoRAs),
		set: intVal(func(o *Options) *int { return &o.MaxLoRAs })},
	{name: "max-lora-rank", meta: choiceMeta(engine.MaxLoRARanks), help: fmt.Sprintf("rank every adapter is padded to; the LoRA kernels' cost grows with it (default %d)", engine.DefaultMaxLoRARank),
		set: intVal(func(o *Options) *int { return &o.MaxLoRARank })},
}

// modelNames are the names a request may ask for: the served names, then
// the LoRA adapters.
func (s *Server) modelNames() []string {
	names := slices.Clone(s.info.Config.ServedNames())
	for _, m := range s.info.Config.LoRAModules {
		names = append(names, m.Name)
	}
	return names
}

// adapterOf is the adapter a request for model asks for ("" for the base
// model).
func (s *Server) adapterOf(model string) string {
	if m, ok := s.info.Config.Adapter(model); ok {
		return m.Name
	}
	return ""
}

// adapterCards are the adapters' /v1/models entries, as vLLM's
// serving_models lists them: the adapter's path as root and the base
// model (its base_model_name, else the first served name) as parent.
func (s *Server) adapterCards() []modelCard {
	cfg := s.info.Config
	cards := make([]modelCard, 0, len(cfg.LoRAModules))
	for _, m := range cfg.LoRAModules {
		parent := m.BaseModelName
		if parent == "" {
			parent = cfg.ModelName()
		}
		cards = append(cards, modelCard{ID: m.Name, Object: "model", Created: s.created.Unix(), OwnedBy: "vllm", Root: m.Path, Parent: &parent, MaxModelLen: cfg.MaxModelLen})
	}
	return cards
}
