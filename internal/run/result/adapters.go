package result

import (
	"fmt"
	"io"

	"github.com/vllmperf/vllmperf/internal/run/vllmfmt"
)

// writeAdapters writes each adapter's summary as vllm bench serve prints a
// run's, headed by the adapter's name.
func (r *Result) writeAdapters(w io.Writer) error {
	for _, name := range r.AdapterNames {
		if _, err := fmt.Fprintf(w, "\nLoRA adapter %s:\n", name); err != nil {
			return err
		}
		if err := vllmfmt.WriteText(w, r.Adapters[name]); err != nil {
			return err
		}
	}
	return nil
}
