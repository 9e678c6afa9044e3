package runflags

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/internal/harness/workload"
)

// MMFlags are vllm bench serve's random-mm data set flags. --dataset-name
// is registered here for random-mm (and random, the synthetic prompts
// vllmperf run sends anyway); a wider --dataset-name belongs with the
// other data set flags.
type MMFlags struct {
	DatasetName string
	BaseItems   int
	Buckets     string
}

// mmOnly are the flags that shape random-mm's images.
var mmOnly = []string{"random-mm-base-items-per-request", "random-mm-bucket-config"}

// Register defines the flags on f, with vllm bench serve's defaults.
func (m *MMFlags) Register(f *pflag.FlagSet) {
	f.StringVar(&m.DatasetName, "dataset-name", "random", "random (synthetic prompts) or random-mm (the same, with images: chat only)")
	f.IntVar(&m.BaseItems, "random-mm-base-items-per-request", 1, "with --dataset-name random-mm: images per request")
	f.StringVar(&m.Buckets, "random-mm-bucket-config", "{(256, 256, 1): 0.5, (720, 1280, 1): 0.5}", `with --dataset-name random-mm: image sizes and their probabilities, "{(HEIGHT, WIDTH, 1): P, ...}"`)
}

// apply checks the flags and gives class its images.
func (m *MMFlags) apply(fs *pflag.FlagSet, endpoint string, class *workload.Class) error {
	switch m.DatasetName {
	case "random":
		for _, name := range mmOnly {
			if fs.Changed(name) {
				return fmt.Errorf("--%s shapes random-mm's images: add --dataset-name random-mm", name)
			}
		}
		return nil
	case "random-mm":
	default:
		return fmt.Errorf("--dataset-name %q: vllmperf run makes random or random-mm (a file goes to --dataset)", m.DatasetName)
	}
	if fs.Changed("dataset") {
		return fmt.Errorf("--dataset-name random-mm makes random prompts with images, --dataset sends a file's prompts: drop one of them")
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
