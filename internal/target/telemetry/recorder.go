package telemetry

import (
	"context"
	"sync"
	"time"
)

// DefaultInterval is how often a Recorder reads its sources.
const DefaultInterval = 500 * time.Millisecond

// Recording is what a Recorder saw of one source.
type Recording struct {
	Source  string
	Samples []Sample
	// Processes are every compute process seen, once each (by PID);
	// ProcessesKnown is false when the source cannot list them.
	Processes      []Process
	ProcessesKnown bool
	// Cached is Reading.Cached: the source's values may predate the run.
	Cached bool
	// Errors are the failed reads (the first few).
	Errors []string
	// Start and End bound the recording.
	Start, End time.Time
}

// maxErrors is how many failed reads a Recording keeps.
const maxErrors = 3

// Recorder reads its sources on a ticker from Start until Stop.
type Recorder struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	recs   []*Recording
	seen   []map[int]bool
}

// Start reads every source at once, then every interval (DefaultInterval
// when 0) until Stop, which reads them once more.
func Start(ctx context.Context, interval time.Duration, sources ...Source) *Recorder {
	if interval <= 0 {
		interval = DefaultInterval
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &Recorder{cancel: cancel, done: make(chan struct{})}
	now := time.Now()
	for _, s := range sources {
		r.recs = append(r.recs, &Recording{Source: s.Name(), Start: now})
		r.seen = append(r.seen, map[int]bool{})
	}
	r.readAll(ctx, sources)
	go func() {
		defer close(r.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				r.readAll(context.WithoutCancel(ctx), sources)
				return
			case <-t.C:
				r.readAll(ctx, sources)
			}
		}
	}()
	return r
}

// readAll reads every source once.
func (r *Recorder) readAll(ctx context.Context, sources []Source) {
	for i, s := range sources {
		rd, err := s.Read(ctx)
		r.mu.Lock()
		rec := r.recs[i]
		switch {
		case err != nil && ctx.Err() == nil:
			if len(rec.Errors) < maxErrors {
				rec.Errors = append(rec.Errors, err.Error())
			}
		case err == nil:
			rec.Samples = append(rec.Samples, rd.Samples...)
			rec.ProcessesKnown = rec.ProcessesKnown || rd.ProcessesKnown
			rec.Cached = rec.Cached || rd.Cached
			for _, p := range rd.Processes {
				if !r.seen[i][p.PID] {
					r.seen[i][p.PID] = true
					rec.Processes = append(rec.Processes, p)
				}
			}
		}
		r.mu.Unlock()
	}
}

// Stop ends the recording and returns it, one Recording per source.
func (r *Recorder) Stop() []Recording {
	r.cancel()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	end := time.Now()
	out := make([]Recording, len(r.recs))
	for i, rec := range r.recs {
		rec.End = end
		out[i] = *rec
	}
	return out
}
