package input

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/docfigures"
)

// TestReadRefusesNonFinite: a NaN or infinite value is refused with the
// file, the line and the value, whatever its case or sign.
func TestReadRefusesNonFinite(t *testing.T) {
	const good = "BenchmarkPerf/profile=basic/scenario=a 1 100 ns/op 5 tok/s\n"
	tests := []struct {
		name, line, want string
	}{
		{"NaN", "BenchmarkPerf/profile=basic/scenario=a 1 NaN ns/op\n", "bench.txt:2:"},
		{"nan in a later unit", "BenchmarkPerf/profile=basic/scenario=a 1 100 ns/op nan tok/s\n", "NaN tok/s"},
		{"+Inf", "BenchmarkPerf/profile=basic/scenario=a 1 +Inf ns/op\n", "+Inf ns/op"},
		{"-Inf", "BenchmarkPerf/profile=basic/scenario=a 1 100 ns/op -Inf tok/s\n", "-Inf tok/s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(good+tt.line), "bench.txt")
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range []string{tt.want, "bench.txt:2:", "finite"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

// TestReadBounded: a file past MaxFileBytes is refused, not read whole.
func TestReadBounded(t *testing.T) {
	r := strings.NewReader(strings.Repeat("x", MaxFileBytes+10))
	_, err := Read(r, "big.txt")
	if err == nil || !strings.Contains(err.Error(), "big.txt: larger than") {
		t.Fatalf("error %v, want big.txt: larger than", err)
	}
	if r.Len() != 9 {
		t.Errorf("read %d bytes, want MaxFileBytes+1", MaxFileBytes+10-r.Len())
	}
}

// simBaseline is the shipped simulator baseline's path.
func simBaseline(t *testing.T) string {
	t.Helper()
	return filepath.Join(docfigures.ModuleRoot(t), "baselines", "sim.txt")
}

// TestMissingBaselineHint: a results file that is not there names the
// files its folder holds (docs/verdict.md's first example once named a
// baselines/gpu.txt the repository does not ship).
func TestMissingBaselineHint(t *testing.T) {
	t.Parallel()
	_, err := ReadFile(filepath.Join(filepath.Dir(simBaseline(t)), "gpu.txt"))
	if err == nil || !strings.Contains(err.Error(), "holds sim.txt") || !strings.Contains(err.Error(), "make baseline-gpu") {
		t.Errorf("ReadFile(baselines/gpu.txt) = %v, want the folder's files named and how a GPU baseline is made", err)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "none.txt")); err == nil || strings.Contains(err.Error(), "holds") {
		t.Errorf("ReadFile in an empty folder = %v, want the error without a list", err)
	}
}
