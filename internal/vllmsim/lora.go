package vllmsim

import (
	"slices"
)

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
