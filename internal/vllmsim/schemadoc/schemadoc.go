package schemadoc

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
	pieces, err := Pieces(s, seed)
	return len(pieces), err
}

// Pieces builds a JSON document that validates against schema s and cuts
// it into the pieces the simulator streams, one a token. seed varies the
// document's values between requests.
func Pieces(s map[string]any, seed string) ([]string, error) {
	h := fnv.New64a()
	_, _ = h.Write([]byte(seed))
	doc, err := instance(s, h.Sum64(), 0)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return split(string(b)), nil
}

// pieceLen is the most characters of a string one output token carries.
const pieceLen = 4
