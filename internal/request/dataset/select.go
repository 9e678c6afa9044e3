package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"time"
)

// Options select the requests of a run from a File.
type Options struct {
	// NumPrompts is how many requests to take (0: every entry that passes
	// the filters).
	NumPrompts int
	// Seed orders the sample: entries are shuffled with it before the
	// first NumPrompts that pass the filters are taken, as vLLM does. A
	// trace keeps its order (its first NumPrompts are taken).
	Seed uint64
	// Filter bounds the lengths; for ShareGPT its zero fields take
	// ShareGPTFilter's.
	Filter Filter
	// Speed scales a trace's pace: 2 replays it twice as fast (0: 1).
	Speed float64
}

// Filter bounds request lengths, in words (0: no bound).
type Filter struct {
	MinPrompt, MaxPrompt int
	MinOutput, MaxOutput int
	// MaxTotal bounds prompt plus output.
	MaxTotal int
}

// ShareGPTFilter is vLLM's default for ShareGPT (is_valid_sequence in
// vllm/benchmarks/datasets.py): prompt and output at least 4, prompt at
// most 1024, prompt plus output at most 2048.
var ShareGPTFilter = Filter{MinPrompt: 4, MinOutput: 4, MaxPrompt: 1024, MaxTotal: 2048}

// Validate reports bounds that contradict each other.
func (f Filter) Validate() error {
	var errs []error
	for _, v := range []struct {
		name string
		n    int
	}{{"min prompt", f.MinPrompt}, {"max prompt", f.MaxPrompt}, {"min output", f.MinOutput}, {"max output", f.MaxOutput}, {"max total", f.MaxTotal}} {
		if v.n < 0 {
			errs = append(errs, fmt.Errorf("%s length %d: want 0 (no bound) or more", v.name, v.n))
		}
	}
	if f.MaxPrompt > 0 && f.MinPrompt > f.MaxPrompt {
		errs = append(errs, fmt.Errorf("min prompt length %d exceeds max prompt length %d", f.MinPrompt, f.MaxPrompt))
	}
	if f.MaxOutput > 0 && f.MinOutput > f.MaxOutput {
		errs = append(errs, fmt.Errorf("min output length %d exceeds max output length %d", f.MinOutput, f.MaxOutput))
	}
	return errors.Join(errs...)
}

// String words the filter's bounds: "prompt 4 to 1024 words, output at
// least 4 tokens, prompt + output at most 2048"; a zero bound is none.
func (f Filter) String() string {
	bounds := func(what, unit string, lo, hi int) string {
		switch {
		case lo > 0 && hi > 0:
			return fmt.Sprintf("%s %d to %d %s", what, lo, hi, unit)
		case lo > 0:
			return fmt.Sprintf("%s at least %d %s", what, lo, unit)
		case hi > 0:
			return fmt.Sprintf("%s at most %d %s", what, hi, unit)
		}
		return what + " any length"
	}
	s := bounds("prompt", "words", f.MinPrompt, f.MaxPrompt) + ", " + bounds("output", "tokens", f.MinOutput, f.MaxOutput)
	if f.MaxTotal > 0 {
		s += fmt.Sprintf(", prompt + output at most %d", f.MaxTotal)
	}
	return s
}

// withDefaults fills f's zero fields from d.
func (f Filter) withDefaults(d Filter) Filter {
	for _, p := range []struct{ f, d *int }{{&f.MinPrompt, &d.MinPrompt}, {&f.MaxPrompt, &d.MaxPrompt}, {&f.MinOutput, &d.MinOutput}, {&f.MaxOutput, &d.MaxOutput}, {&f.MaxTotal, &d.MaxTotal}} {
		if *p.f == 0 {
			*p.f = *p.d
		}
	}
	return f
}

// keeps reports whether e passes the filter.
func (f Filter) keeps(e Entry) bool {
	p, o := e.PromptWords(), e.OutputLen
	out := func(n, lo, hi int) bool { return n < lo || (hi > 0 && n > hi) }
	return !out(p, f.MinPrompt, f.MaxPrompt) && !out(o, f.MinOutput, f.MaxOutput) && (f.MaxTotal == 0 || p+o <= f.MaxTotal)
}

// Select filters, samples and takes the requests of a run from f.
func (f *File) Select(o Options) (*Set, error) {
	if err := o.Filter.Validate(); err != nil {
		return nil, fmt.Errorf("dataset %s: %w", f.Name, err)
	}
	if o.NumPrompts < 0 {
		return nil, fmt.Errorf("dataset %s: num prompts %d: want 0 (all) or more", f.Name, o.NumPrompts)
	}
	if o.Speed < 0 || math.IsNaN(o.Speed) || math.IsInf(o.Speed, 0) {
		return nil, fmt.Errorf("dataset %s: speed %v: want a positive factor (2 replays a trace twice as fast)", f.Name, o.Speed)
	}
	filter := o.Filter
	if f.Format == ShareGPT {
		filter = filter.withDefaults(ShareGPTFilter)
	}
	order := make([]Entry, len(f.Entries))
	copy(order, f.Entries)
	if f.Format != Trace {
		r := rand.New(rand.NewPCG(o.Seed, 0x5ca1ab1e))
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	var picked []Entry
	for _, e := range order {
		if filter.keeps(e) {
			picked = append(picked, e)
		}
		if o.NumPrompts > 0 && len(picked) == o.NumPrompts {
			break
		}
	}
	switch {
	case len(picked) == 0:
		return nil, fmt.Errorf("dataset %s: none of its %d entries passes the length filters (%s): widen them", f.Name, len(f.Entries), filter)
	case o.NumPrompts > len(picked):
		return nil, fmt.Errorf("dataset %s: %d prompts asked for, but only %d of its %d entries pass the length filters (%+v, in words): lower the number or widen the filters", f.Name, o.NumPrompts, len(picked), len(f.Entries), filter)
	}
	if f.Format == Trace {
		retime(picked, o.Speed)
	}
	return &Set{Name: f.Name, Format: f.Format, Entries: picked, Timed: f.Format == Trace, Hash: hash(picked)}, nil
}

// retime makes a trace's kept arrivals offsets from its first kept one,
// divided by speed.
func retime(entries []Entry, speed float64) {
	if speed == 0 {
		speed = 1
	}
	first := entries[0].At
	for i := range entries {
		entries[i].At = time.Duration(float64(entries[i].At-first) / speed)
	}
}

// Load opens the data set called name (see Open) and selects from it.
func Load(builtin fs.FS, name string, o Options) (*Set, error) {
	f, err := Open(builtin, name)
	if err != nil {
		return nil, err
	}
	return f.Select(o)
}
