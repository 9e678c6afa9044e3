package config

import (
	"fmt"

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
