package config

import (
	"strings"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
)

// poolingFlags are vllm serve's runner flags (engine.PoolingConfig).
var poolingFlags = []flagSpec{
	{name: "runner", meta: "{" + strings.Join(engine.Runners, ",") + "}", help: "generate (chat, completions) or pooling (/v1/embeddings); auto picks pooling for an embedding model's preset (default auto)",
		set: str(func(o *Options) *string { return &o.Runner })},
	{name: "task", meta: "TASK", help: "deprecated spelling of --runner: " + strings.Join(engine.Tasks, ", ") + " (embed, embedding, classify, score and reward pick the pooling runner)",
		set: str(func(o *Options) *string { return &o.Task })},
}
