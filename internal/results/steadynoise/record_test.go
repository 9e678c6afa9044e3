package steadynoise

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/vllmperf/vllmperf/internal/results"
)

// EnvData names the folder TestRecord reads: its quick/ and full/
// subfolders, one results folder each (docs/load-shapes.md's protocol).
const EnvData = "VLLMPERF_STEADY_DATA"

// sizes are the protocol's sizes, each a subfolder of EnvData's folder and
// a pair of testdata files.
var sizes = []string{"quick", "full"}

// TestRecord writes testdata/SIZE-{whole,steady}.txt from
// $VLLMPERF_STEADY_DATA/SIZE for each size whose folder is there:
//
//	VLLMPERF_STEADY_DATA=DIR go test -count=1 -run '^TestRecord$' ./internal/results/steadynoise/
func TestRecord(t *testing.T) {
	dir := os.Getenv(EnvData)
	if dir == "" {
		t.Skip(EnvData + " unset: nothing to record")
	}
	recorded := 0
	for _, size := range sizes {
		src := filepath.Join(dir, size)
		if _, err := os.Stat(filepath.Join(src, results.SummaryFile)); errors.Is(err, os.ErrNotExist) {
			t.Logf("%s: no %s; %s not recorded", src, results.SummaryFile, size)
			continue
		}
		f, err := results.ReadFolder(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range f.Cut {
			t.Errorf("%s: %s: record a folder whose run ended", size, c)
		}
		files, err := Write(f)
		if err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string][]byte{size + "-whole.txt": files.Whole, size + "-steady.txt": files.Steady} {
			if err := os.WriteFile(filepath.Join("testdata", name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s: %d runs, %d of them with whole-run figures in the steady file", size, files.Runs, files.Fallbacks)
		recorded++
	}
	if recorded == 0 {
		t.Fatalf("%s=%s holds no %v subfolder with a %s", EnvData, dir, sizes, results.SummaryFile)
	}
}
