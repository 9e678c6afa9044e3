package result

import (
	"fmt"
	"io"
	"time"

	"github.com/vllmperf/vllmperf/internal/run/vllmfmt"
)

// WriteText writes the run's summary as vllm bench serve prints it, the
// server's side of it, and ready, the server's time to ready, when known.
func (r *Result) WriteText(w io.Writer, ready time.Duration) error {
	if err := vllmfmt.WriteText(w, r.Summary); err != nil {
		return err
	}
	if err := vllmfmt.WriteServer(w, r.Delta, r.Series, r.ScrapeErr); err != nil {
		return err
	}
	if err := r.writeReasoning(w); err != nil {
		return err
	}
	if err := r.writeAdapters(w); err != nil {
		return err
	}
	if r.Load != nil {
		if err := r.writeWindows(w, r.Windows()); err != nil {
			return err
		}
	}
	if r.Lengths != nil {
		if err := r.Lengths.writeLengths(w); err != nil {
			return err
		}
	}
	for _, c := range r.Point.Classes {
		if c.Dataset == nil {
			continue
		}
		if _, err := fmt.Fprintf(w, "%-40s %s\n", "Data set:", c.Dataset.Describe()); err != nil {
			return err
		}
	}
	if ready > 0 {
		if _, err := fmt.Fprintf(w, "%-40s %.1f\n", "Server time to ready (ms):", float64(ready)/float64(time.Millisecond)); err != nil {
			return err
		}
	}
	return nil
}
