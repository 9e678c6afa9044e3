// Package progress shows how far a run of vllmperf run is, on stderr.
package progress

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/vllmperf/vllmperf/internal/request/load"
	"golang.org/x/term"
)

// Progress shows how far a run is on stderr: a progress bar on a terminal,
// and a plain line at every tenth of the run (or every 100 requests when
// only --duration bounds it) elsewhere, so CI logs stay readable.
type Progress struct {
	bar   *progressbar.ProgressBar
	plain io.Writer
	total int
	next  int
	start time.Time
}

// New returns the progress of a run of cfg written to w; quiet shows
// nothing.
func New(w io.Writer, quiet bool, cfg load.Config) *Progress {
	if quiet {
		return &Progress{}
	}
	total := cfg.Warmup + cfg.Requests
	if cfg.Requests == 0 {
		total = -1 // a spinner: only the duration bounds the run
	}
	if f, ok := w.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		return &Progress{plain: w, total: total, next: plainStep(total), start: time.Now()}
	}
	return &Progress{bar: progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("requests"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("req"),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)}
}

// plainStep is how many requests lie between two plain progress lines.
func plainStep(total int) int {
	if total <= 0 {
		return 100
	}
	return max(1, total/10)
}

// Update is load's progress callback (harness.WithProgress).
func (p *Progress) Update(done, _ int) {
	switch {
	case p.bar != nil:
		_ = p.bar.Set(done)
	case p.plain != nil && done >= p.next:
		if p.total > 0 {
			fmt.Fprintf(p.plain, "vllmperf: %d/%d requests done (%s)\n", done, p.total, time.Since(p.start).Round(100*time.Millisecond))
		} else {
			fmt.Fprintf(p.plain, "vllmperf: %d requests done (%s)\n", done, time.Since(p.start).Round(100*time.Millisecond))
		}
		p.next += plainStep(p.total)
	}
}

// Finish clears the bar.
func (p *Progress) Finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
		_ = p.bar.Clear()
	}
}
