package scenario

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestFormatDocumented: every key a scenario file may hold is in the
// format of scenarios/README.md, where users look for it.
func TestFormatDocumented(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "scenarios", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	_, section, ok := strings.Cut(doc, "## Scenarios (`workloads/`)")
	if !ok {
		t.Fatal("scenarios/README.md has no section ## Scenarios (`workloads/`)")
	}
	for _, key := range yamlKeys(reflect.TypeOf(file{})) {
		if !strings.Contains(section, "\n"+key+":") && !strings.Contains(section, " "+key+":") && !strings.Contains(section, "{"+key+":") {
			t.Errorf("scenario key %s: is not in scenarios/README.md's scenario format: document it there", key)
		}
	}
}

// yamlKeys lists the yaml keys of t and of the structs inside it.
func yamlKeys(t reflect.Type) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name != "" && name != "-" {
			out = append(out, name)
		}
		out = append(out, yamlKeys(f.Type)...)
	}
	return out
}
