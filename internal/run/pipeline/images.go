package pipeline

import "github.com/vllmperf/vllmperf/internal/request/workload"

// withImages reports whether a class sends images (workload.MM): their
// placeholder tokens count in usage.prompt_tokens but not in /tokenize of
// the text, so such prompts are not measured on /tokenize.
func withImages(classes []workload.Class) bool {
	for _, c := range classes {
		if c.Config.MM != nil {
			return true
		}
	}
	return false
}
