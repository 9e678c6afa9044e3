package schemadoc

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPieces: the pieces join into a JSON document of the schema's shape,
// the same for the same seed; GuidedTokens counts them; a schema the
// simulator cannot build for is an error.
func TestPieces(t *testing.T) {
	tests := []struct {
		name, schema string
		check        func(doc any) bool
		err          string
	}{
		{"object", `{"type":"object","properties":{"city":{"type":"string"},"n":{"type":"integer","minimum":3,"maximum":3}}}`,
			func(doc any) bool {
				m, ok := doc.(map[string]any)
				_, city := m["city"].(string)
				return ok && city && m["n"] == 3.0
			}, ""},
		{"enum", `{"enum":["a","b"]}`, func(doc any) bool { return doc == "a" }, ""},
		{"array", `{"type":"array","items":{"type":"boolean"},"minItems":2}`,
			func(doc any) bool { a, ok := doc.([]any); return ok && len(a) == 2 }, ""},
		{"unsupported", `{"type":"tuple"}`, nil, `type "tuple" is not supported`},
		{"not json", `{"type":`, nil, "does not parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := GuidedTokens(json.RawMessage(tt.schema), "seed")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("GuidedTokens: error %v, want one containing %q", err, tt.err)
				}
				return
			}
			var s map[string]any
			if err := json.Unmarshal([]byte(tt.schema), &s); err != nil {
				t.Fatal(err)
			}
			pieces, err := Pieces(s, "seed")
			if err != nil || n != len(pieces) {
				t.Fatalf("Pieces: %d pieces, err %v; GuidedTokens %d", len(pieces), err, n)
			}
			again, _ := Pieces(s, "seed")
			if strings.Join(again, "") != strings.Join(pieces, "") {
				t.Errorf("the same seed built %q, then %q", strings.Join(pieces, ""), strings.Join(again, ""))
			}
			var doc any
			if err := json.Unmarshal([]byte(strings.Join(pieces, "")), &doc); err != nil || !tt.check(doc) {
				t.Errorf("document %q (err %v) does not fit the schema", strings.Join(pieces, ""), err)
			}
		})
	}
}
