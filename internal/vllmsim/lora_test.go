package vllmsim

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
)

// loraArgs serve two adapters on sim-model, both in one batch.
var loraArgs = []string{"--enable-lora", "--lora-modules", "sql-lora=/adapters/sql", `{"name": "chat-lora", "path": "/adapters/chat", "base_model_name": "sim-model"}`, "--max-loras", "2", "--max-lora-rank", "16"}

func TestLoRAModelsList(t *testing.T) {
	t.Parallel()
	m := startSim(t, loraArgs...)
	status, body := m.get(t, "/v1/models")
	require.Equal(t, http.StatusOK, status, string(body))
	var list struct {
		Data []modelCard `json:"data"`
	}
	require.NoError(t, json.Unmarshal(body, &list))
	require.Len(t, list.Data, 3, string(body))
	assert.Nil(t, list.Data[0].Parent, "the base model has no parent")
	for i, want := range []struct{ id, root string }{{"sql-lora", "/adapters/sql"}, {"chat-lora", "/adapters/chat"}} {
		c := list.Data[i+1]
		assert.Equal(t, want.id, c.ID)
		assert.Equal(t, want.root, c.Root, "vLLM lists an adapter's path as its root")
		require.NotNil(t, c.Parent)
		assert.Equal(t, "sim-model", *c.Parent, "and the base model as its parent")
	}
}

func TestLoRARequests(t *testing.T) {
	t.Parallel()
	m := startSim(t, loraArgs...)
	for _, tc := range []struct {
		name, model string
		status      int
		msg         string
	}{
		{"an adapter is served", "sql-lora", http.StatusOK, ""},
		{"the base model too", "sim-model", http.StatusOK, ""},
		{"an unknown adapter gets vLLM's 404", "nope-lora", http.StatusNotFound, "The model `nope-lora` does not exist."},
	} {
		status, body := m.post(t, "/v1/chat/completions", `{"model": "`+tc.model+`", "messages": [{"role": "user", "content": "hi there"}], "max_tokens": 3}`)
		require.Equal(t, tc.status, status, "%s: %s", tc.name, body)
		if tc.msg != "" {
			var e struct {
				Error struct{ Message, Type string }
			}
			require.NoError(t, json.Unmarshal(body, &e))
			assert.Equal(t, tc.msg, e.Error.Message, tc.name)
			assert.Equal(t, "NotFoundError", e.Error.Type, tc.name)
		}
	}
	mfs := m.scrape(t)
	require.Contains(t, mfs, "vllm:lora_requests_info")
	assert.Positive(t, sum(mfs, "vllm:lora_requests_info", "running_lora_adapters", "sql-lora", "max_lora", "2"))
}

func TestLoRAFlagErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--lora-modules", "a=/a"}, "argument --lora-modules: adapters need LoRA enabled: add --enable-lora"},
		{[]string{"--enable-lora", "--lora-modules", "a"}, "argument --lora-modules: invalid adapter 'a': write NAME=PATH"},
		{[]string{"--enable-lora", "--max-lora-rank", "12"}, "argument --max-lora-rank: invalid choice"},
	} {
		_, err := config.ParseArgs(tc.args)
		var ae *config.ArgError
		require.True(t, errors.As(err, &ae), "%v: %v", tc.args, err)
		assert.Contains(t, ae.Msg, tc.want)
	}
	assert.Contains(t, config.Usage(), "--lora-modules NAME=PATH")
}

// The LoRA flags' rows of parityCases (TestFlagsAndOptionsAgree), kept
// with the LoRA tests.
func init() {
	lora := func(ms ...engine.LoRAModule) func(*config.Options) {
		return func(o *config.Options) { o.LoRAModules = ms }
	}
	parityCases["enable-lora"] = []parityValue{v("", true, func(o *config.Options) { o.EnableLoRA = true }), v("no", true, func(o *config.Options) { o.EnableLoRA = false })}
	parityCases["lora-modules"] = []parityValue{v("a=/a|b=/b", false, lora(engine.LoRAModule{Name: "a", Path: "/a"}, engine.LoRAModule{Name: "b", Path: "/b"})),
		syntax("a"), syntax(`{"name": "a", "rank": 8}`)}
	parityCases["max-loras"] = []parityValue{v("4", true, func(o *config.Options) { o.MaxLoRAs = 4 }), v("-1", false, func(o *config.Options) { o.MaxLoRAs = -1 }), syntax("few")}
	parityCases["max-lora-rank"] = []parityValue{v("64", true, func(o *config.Options) { o.MaxLoRARank = 64 }), v("12", false, func(o *config.Options) { o.MaxLoRARank = 12 }), syntax("high")}
}
