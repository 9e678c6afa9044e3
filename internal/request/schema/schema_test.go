package schema

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const person = `{"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}}, "required": ["name", "age"], "additionalProperties": false}`

// TestCheck: valid output passes; text that is not JSON, or JSON that
// breaks the schema, is refused with the reason.
func TestCheck(t *testing.T) {
	s, err := Compile("person", json.RawMessage(person))
	require.NoError(t, err)
	for _, tc := range []struct {
		text, want string // want "" for valid
	}{
		{`{"name": "ada", "age": 36}`, ""},
		{` {"age": 1, "name": "x"}` + "\n", ""},
		{`{"name": "ada", "age": 3`, "the output is not JSON"},
		{`{"name": "ada"}`, "does not match the schema"},
		{`{"name": "ada", "age": -1}`, "does not match the schema"},
		{`{"name": "ada", "age": 1, "x": 2}`, "does not match the schema"},
		{`not json at all`, "the output is not JSON"},
	} {
		err := s.Check(tc.text)
		if tc.want == "" {
			assert.NoError(t, err, tc.text)
			continue
		}
		assert.ErrorContains(t, err, tc.want, tc.text)
	}
	_, err = Compile("bad", json.RawMessage(`{"type": 5}`))
	assert.Error(t, err)
	a, err := Cached(json.RawMessage(person))
	require.NoError(t, err)
	b, _ := Cached(json.RawMessage(person))
	assert.Same(t, a, b, "compiled once")
}
