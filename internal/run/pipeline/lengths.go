package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/request/workload"
	"github.com/vllmperf/vllmperf/internal/run/result"
)

// Bounds of the /tokenize measurements.
const (
	// MaxTokenized is how many of a run's requests are sent to /tokenize
	// (the first, warm-up included): every request of the suite's points.
	MaxTokenized = 1024
	// tokenizeWorkers is how many /tokenize calls are in flight at once.
	tokenizeWorkers = 8
	// textSamples is how many requests per class have their prompt text
	// alone counted against the declared length.
	textSamples = 4
)

// newLengths lists the mix's classes with their declared lengths.
func newLengths(mix *workload.Mix, tokenize, adjusted bool) *result.Lengths {
	l := &result.Lengths{Tokenize: tokenize, Adjusted: adjusted}
	for _, name := range mix.Classes() {
		l.Classes = append(l.Classes, result.ClassLength{Class: name, Declared: mix.Declared(name)})
	}
	return l
}

// probeWordTokens asks the server how many tokens each vocabulary word
// adds after a space. It returns nil when one each (the prompts are then
// exact as built), and ok false when the server has no /tokenize.
func probeWordTokens(ctx context.Context, c *openai.Client, model string) (costs []int, ok bool, err error) {
	vocab := workload.Vocabulary()
	n, err := c.TokenizeText(ctx, model, strings.Join(vocab, " "))
	switch {
	case errors.Is(err, openai.ErrNoTokenize):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	case n == len(vocab):
		return nil, true, nil
	}
	const lead = "the"
	base, err := c.TokenizeText(ctx, model, lead)
	if err != nil {
		return nil, true, err
	}
	costs = make([]int, len(vocab))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(tokenizeWorkers)
	for i, w := range vocab {
		g.Go(func() error {
			n, err := c.TokenizeText(gctx, model, lead+" "+w)
			costs[i] = n - base
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, true, err
	}
	return costs, true, nil
}

// withWordTokens sets the served model's tokens per word on every class.
func withWordTokens(classes []workload.Class, costs []int) []workload.Class {
	out := make([]workload.Class, len(classes))
	copy(out, classes)
	for i := range out {
		out[i].Config.WordTokens = costs
	}
	return out
}

// tokenizeRequests asks /tokenize for the count of each request the run
// will send (up to MaxTokenized), by index.
func tokenizeRequests(ctx context.Context, c *openai.Client, cfg load.Config, next func(int) openai.Request) (map[int]int, error) {
	turns, requests := max(cfg.Turns, 1), cfg.Requests
	switch {
	case requests == 0 && cfg.Arrivals != nil:
		requests = len(cfg.Arrivals)
	case requests == 0: // bounded by time: the first ones
		requests = tokenizeWorkers * textSamples
	}
	n := (cfg.Warmup + requests) * turns
	n = min(n, MaxTokenized)
	counts := make([]int, n)
	asked := make([]bool, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(tokenizeWorkers)
	for i := range n {
		if i%turns != 0 {
			continue // a later turn carries replies not known yet
		}
		asked[i] = true
		req := next(i)
		g.Go(func() error {
			var err error
			counts[i], err = c.Tokenize(gctx, req)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := make(map[int]int, n)
	for i, v := range counts {
		if asked[i] {
			out[i] = v
		}
	}
	return out, nil
}

// measureLengths counts the run's prompt tokens before it starts: every
// request as sent (settleLengths compares them with the usage), and the
// first requests' text of each synthetic class, against its declared
// length.
func measureLengths(ctx context.Context, r *result.Result, c *openai.Client, mix *workload.Mix, cfg load.Config, next func(int) openai.Request) {
	l := r.Lengths
	counts, err := tokenizeRequests(ctx, c, cfg, next)
	if err != nil {
		r.Warnings = append(r.Warnings, fmt.Errorf("prompt lengths: %w; the usage counts decide", err))
		l.Tokenize = false
		return
	}
	l.Counts = counts
	for k := range l.Classes {
		cl := &l.Classes[k]
		seen := 0
		for i := 0; i < MaxTokenized && cl.Declared > 0 && seen < textSamples; i++ {
			if _, asked := counts[i]; !asked || mix.ClassOf(i) != cl.Class {
				continue
			}
			req := next(i)
			t, err := c.TokenizeText(ctx, req.Model, strings.TrimSpace(req.System+" "+req.Prompt))
			if err != nil {
				r.Warnings = append(r.Warnings, fmt.Errorf("prompt lengths: %w", err))
				return
			}
			cl.Text += float64(t)
			seen++
		}
		if seen > 0 {
			cl.Text /= float64(seen)
		}
	}
}

// settleLengths compares the counts with what the server reported once
// the run is over, and warns about every difference, with the numbers.
func settleLengths(r *result.Result, mix *workload.Mix) {
	l := r.Lengths
	sums, ns := map[string]int{}, map[string]int{}
	tsums, tns := map[string]int{}, map[string]int{}
	var example string
	for _, s := range r.Load.Measured() {
		class := mix.ClassOf(s.Index)
		want, asked := l.Counts[s.Index]
		if asked {
			tsums[class] += want
			tns[class]++
		}
		if !s.OK() || s.PromptTokens <= 0 {
			continue
		}
		sums[class] += s.PromptTokens
		ns[class]++
		if asked && want != s.PromptTokens {
			l.Mismatched++
			if example == "" {
				example = fmt.Sprintf("request %d: %d by usage, %d by /tokenize", s.Index, s.PromptTokens, want)
			}
		}
	}
	if l.Mismatched > 0 {
		r.Warnings = append(r.Warnings, fmt.Errorf("%d requests: the server's prompt_tokens differ from its own /tokenize count (%s)", l.Mismatched, example))
	}
	for k := range l.Classes {
		cl := &l.Classes[k]
		if ns[cl.Class] > 0 {
			cl.Served = float64(sums[cl.Class]) / float64(ns[cl.Class])
		}
		if cl.Requests = tns[cl.Class]; cl.Requests > 0 { // the measured ones, as Served
			cl.Tokenized = float64(tsums[cl.Class]) / float64(cl.Requests)
		}
		if w := declaredWarning(*cl, l.Tokenize); w != nil {
			r.Warnings = append(r.Warnings, w)
		}
	}
}

// declaredWarning says how a synthetic class's measured length differs
// from its declared one (nil when it does not, or cannot be known).
func declaredWarning(c result.ClassLength, tokenize bool) error {
	switch {
	case c.Declared == 0:
		return nil
	case tokenize && c.Text != float64(c.Declared):
		return fmt.Errorf("class %s: prompts declared %d tokens hold %.1f on the served model (/tokenize, text alone): the vocabulary could not make them exact", c.Class, c.Declared, c.Text)
	case !tokenize && c.Served > 0 && c.Served != float64(c.Declared):
		return fmt.Errorf("class %s: prompts declared %d tokens were counted %.1f on average by the server (usage; it has no /tokenize to adjust them, and a chat template adds a few)", c.Class, c.Declared, c.Served)
	}
	return nil
}

// longest is the request of the run that needs the most context: by the
// server's /tokenize counts when it answered (PromptWords then holds
// tokens), else by words (workload.Mix.Longest).
func longest(r *result.Result, mix *workload.Mix, next func(int) openai.Request) workload.Longest {
	if r.Lengths == nil || r.Lengths.Counts == nil {
		return mix.Longest()
	}
	var best workload.Longest
	for i, n := range r.Lengths.Counts {
		req := next(i)
		l := workload.Longest{Class: mix.ClassOf(i), PromptWords: n, MaxTokens: req.MaxTokens}
		if l.Tokens() > best.Tokens() || (l.Tokens() == best.Tokens() && l.Class < best.Class) {
			best = l
		}
	}
	return best
}
