package thresholds

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadRefusesAnEmptyFile: a thresholds file without a setting is
// refused, naming it, instead of dropping every limit; one with a single
// setting loads.
func TestLoadRefusesAnEmptyFile(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"empty", "", "holds no setting"},
		{"blank", "\n  \n", "holds no setting"},
		{"comments only", "# gate:\n#   alpha: 0.01\n", "holds no setting"},
		{"empty mapping", "{}\n", "holds no setting"},
		{"one setting", "max_error_rate: 1%\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "thresholds.yaml")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Load: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path)):
				t.Fatalf("Load: %v, want an error naming %s: %s", err, path, tc.want)
			}
		})
	}
}
