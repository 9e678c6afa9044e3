// Package argcheck holds the value checks vllm-sim applies to its settings, each
// with its message in Python argparse's words (what vLLM prints), so that a
// check reads the same whether the engine (package engine) or the API server
// (package vllmsim) applies it, and whether the value came from a flag or
// from a Go struct. Each function returns nil or the message fragment that
// follows "argument --flag: ".
package argcheck

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// IntRange checks lo <= v <= hi; hi = math.MaxInt means no upper bound.
func IntRange(v, lo, hi int) error {
	if v >= lo && v <= hi {
		return nil
	}
	if hi == math.MaxInt {
		return fmt.Errorf("%d is out of range: want an integer >= %d", v, lo)
	}
	return fmt.Errorf("%d is out of range: want an integer from %d to %d", v, lo, hi)
}

// FloatRange checks lo <= v <= hi (lo < v when loOpen); hi = +Inf means no
// upper bound. NaN is out of every range.
func FloatRange(v, lo, hi float64, loOpen bool) error {
	if v >= lo && v <= hi && !(loOpen && v == lo) {
		return nil
	}
	op := ">="
	if loOpen {
		op = ">"
	}
	if math.IsInf(hi, 1) {
		return fmt.Errorf("%s is out of range: want a number %s %g", Float(v), op, lo)
	}
	return fmt.Errorf("%s is out of range: want a number %s %g and <= %g", Float(v), op, lo, hi)
}

// Rate checks a probability: 0 <= v <= 1.
func Rate(v float64) error {
	if v >= 0 && v <= 1 {
		return nil
	}
	return fmt.Errorf("rate %s is out of range: want a probability from 0 to 1, e.g. 0.05", Float(v))
}

// NonNegative checks a duration: 0 or more.
func NonNegative(d time.Duration) error {
	if d >= 0 {
		return nil
	}
	return fmt.Errorf("negative duration: '%s' (want 0 or more, e.g. 500ms)", d)
}

// Choice checks that v is one of choices.
func Choice(v string, choices []string) error {
	if slices.Contains(choices, v) {
		return nil
	}
	return fmt.Errorf("invalid choice: '%s' (choose from %s)", v, Quote(choices))
}

// IntChoice checks that v is one of choices.
func IntChoice(v int, choices []int) error {
	if slices.Contains(choices, v) {
		return nil
	}
	s := make([]string, len(choices))
	for i, c := range choices {
		s[i] = strconv.Itoa(c)
	}
	return fmt.Errorf("invalid choice: '%d' (choose from %s)", v, Quote(s))
}

// Quote lists choices as argparse does: 'a', 'b', 'c'.
func Quote(choices []string) string {
	q := make([]string, len(choices))
	for i, c := range choices {
		q[i] = "'" + c + "'"
	}
	return strings.Join(q, ", ")
}

// Float formats v as the shortest decimal that reads back as v (1.5, -0.1,
// NaN, +Inf).
func Float(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
