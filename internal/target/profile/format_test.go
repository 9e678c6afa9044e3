package profile

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestFormatDocumented: every key a profile file may hold is in the
// format of scenarios/README.md, where users look for it.
func TestFormatDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "scenarios", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(data), "## Server profiles")
	section, _, _ = strings.Cut(section, "\n## ")
	ft := reflect.TypeOf(file{})
	for i := 0; i < ft.NumField(); i++ {
		key, _, _ := strings.Cut(ft.Field(i).Tag.Get("yaml"), ",")
		if !strings.Contains(section, "\n"+key+":") {
			t.Errorf("profile key %s: is not in scenarios/README.md's profile format: document it there", key)
		}
	}
}
