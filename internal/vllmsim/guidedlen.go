package vllmsim

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
)

// GuidedTokens is how many output tokens the simulator streams for a
// structured-output request with this JSON schema (the document it builds,
// a piece a token): what a prediction of the request's length needs. seed
// stands for the request body, which varies the document's values.
func GuidedTokens(schema json.RawMessage, seed string) (int, error) {
	var s map[string]any
	if err := json.Unmarshal(schema, &s); err != nil {
		return 0, fmt.Errorf("the JSON schema does not parse: %w", err)
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(seed))
	doc, err := instance(s, h.Sum64(), 0)
	if err != nil {
		return 0, err
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return 0, err
	}
	return len(split(string(b))), nil
}
