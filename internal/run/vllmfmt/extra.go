package vllmfmt

import (
	"encoding/json"

	"github.com/vllmperf/vllmperf/internal/run/stats"
)

// Extra is a key WriteJSONWith adds after vllmperf's own: a part of the
// run vLLM's --save-result has no key for (LoRA adapters, reasoning).
type Extra struct {
	Key   string
	Value any
}

// Figures are a summary's save-result figure keys (completed, failed,
// the token totals, the throughputs, mean_/median_/std_/pNN_ of ttft,
// tpot, itl and e2el) as one JSON object: a part of a run, such as one
// LoRA adapter's requests.
func Figures(s *stats.Summary) json.Marshaler {
	var o object
	figureKeys(&o, s)
	return o
}

// Ordered is a JSON object of keys and values in the order given.
func Ordered(keys []string, vals []any) json.Marshaler {
	return object{keys: keys, vals: vals}
}
