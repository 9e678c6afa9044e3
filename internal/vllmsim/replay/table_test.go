package replay

import (
	"testing"

	"github.com/vllmperf/vllmperf/internal/vllmsim/calibration"
)

func TestPrintTable(t *testing.T) {
	rows, err := calibration.Load()
	if err != nil {
		t.Fatal(err)
	}
	lines := Run(rows, Options{}, nil)
	t.Log("\n" + Table(lines) + "\n" + Summary(lines))
}
