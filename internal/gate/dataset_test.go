package gate

import (
	"errors"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate/input"
)

// TestDatasetConfig: a scenario's data set line (printed before its
// benchmarks, cleared after) must agree between the sides; other
// benchmarks, without one on either side, still compare.
func TestDatasetConfig(t *testing.T) {
	side := func(hash string) string {
		return header + runs("profile=basic/scenario=poisson/rate=4", 6, steady("tok/s", 100)) +
			"dataset: sharegpt.json requests=10 sha256=" + hash + "\n" +
			runs("profile=basic/scenario=datasets/prompt=sharegpt/conc=4", 6, steady("tok/s", 100)) +
			"dataset:\n" + runs("profile=basic/scenario=ttft-tpot/prompt=short/conc=1", 6, steady("tok/s", 100))
	}
	base := parse(t, "base.txt", side("0123456789abcdef"))
	if _, err := Compare(base, parse(t, "same.txt", side("0123456789abcdef")), nil, Options{}); err != nil {
		t.Fatalf("the same data set: %v", err)
	}
	_, err := Compare(base, parse(t, "other.txt", side("fedcba9876543210")), nil, Options{})
	var ce *input.MismatchError
	if !errors.As(err, &ce) {
		t.Fatalf("another data set compared: err = %v", err)
	}
	msg := err.Error()
	for _, want := range []string{`dataset is "sharegpt.json requests=10 sha256=0123456789abcdef" in base.txt but "sharegpt.json requests=10 sha256=fedcba9876543210" in other.txt`, "(Perf/profile=basic/scenario=datasets/prompt=sharegpt/conc=4)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if len(ce.Mismatches) != 1 {
		t.Errorf("mismatches = %+v, want the data set's only (the cleared line leaves ttft-tpot alone)", ce.Mismatches)
	}
}
