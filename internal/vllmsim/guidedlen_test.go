package vllmsim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/vllmperf/vllmperf/internal/vllmsim/schemadoc"
)

// GuidedTokens is the length of the document the simulator streams for
// the same schema and seed (parseGuided's pieces).
func TestGuidedTokens(t *testing.T) {
	for _, name := range []string{"person.json", "get_weather.json"} {
		schema, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "schemas", name))
		if err != nil {
			t.Fatal(err)
		}
		var rf responseFormat
		rf.Type = "json_schema"
		rf.JSONSchema = &struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
		}{Name: "x", Schema: schema}
		g, aerr := parseGuided(guidedFields{ResponseFormat: &rf}, "seed")
		if aerr != nil {
			t.Fatal(aerr)
		}
		got, err := schemadoc.GuidedTokens(schema, "seed")
		if err != nil || got != len(g.pieces) || got == 0 {
			t.Errorf("%s: GuidedTokens %d, %v; the simulator streams %d", name, got, err, len(g.pieces))
		}
	}
	if _, err := schemadoc.GuidedTokens(json.RawMessage("{"), "seed"); err == nil {
		t.Error("a schema that does not parse: no error")
	}
}
