package runflags

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/internal/request/workload"
)

// MMFlags are vllm bench serve's random-mm data set flags; --dataset-name
// random-mm (VLLMDatasets) turns them on.
type MMFlags struct {
	BaseItems int
	Buckets   string
}

// mmOnly are the flags that shape random-mm's images.
var mmOnly = []string{"random-mm-base-items-per-request", "random-mm-bucket-config"}

// Register defines the flags on f, with vllm bench serve's defaults.
func (m *MMFlags) Register(f *pflag.FlagSet) {
	f.IntVar(&m.BaseItems, "random-mm-base-items-per-request", 1, "with --dataset-name random-mm: images per request")
	f.StringVar(&m.Buckets, "random-mm-bucket-config", "{(256, 256, 1): 0.5, (720, 1280, 1): 0.5}", `with --dataset-name random-mm: image sizes and their probabilities, "{(HEIGHT, WIDTH, 1): P, ...}"`)
}

// apply checks the flags of --dataset-name datasetName (already checked
// against VLLMDatasets) and, for random-mm, gives class its images.
func (m *MMFlags) apply(fs *pflag.FlagSet, datasetName, endpoint string, class *workload.Class) error {
	if datasetName != "random-mm" {
		for _, name := range mmOnly {
			if fs.Changed(name) {
				return fmt.Errorf("--%s shapes random-mm's images: add --dataset-name random-mm", name)
			}
		}
		return nil
	}
	if endpoint != "chat" {
		return fmt.Errorf("--dataset-name random-mm sends images, which go to --endpoint chat, not %s", endpoint)
	}
	if m.BaseItems < 1 {
		return fmt.Errorf("--random-mm-base-items-per-request %d: a request carries at least 1 image", m.BaseItems)
	}
	buckets, err := workload.ParseBucketConfig(m.Buckets)
	if err != nil {
		return fmt.Errorf("--random-mm-bucket-config %w", err)
	}
	class.Config.MM = &workload.MM{Items: m.BaseItems, Buckets: buckets}
	return nil
}
