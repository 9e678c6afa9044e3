package parity

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

func TestCommonPrefix(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ a, b, want string }{
		{"the cat sat", "the cat ran", "the cat"},
		{"the cat sat", "the dog sat", "the"},
		{"the cat", "the cat sat", "the cat"},
		{"the cat", "the cats", "the"},
		{"cat", "dog", ""},
		{" a b", " a c", " a"},
		{"naïve x", "naïvf x", ""},
		{"x é", "x è", "x"},
	} {
		if got := commonPrefix(tc.a, tc.b); got != tc.want {
			t.Errorf("commonPrefix(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}

// words counts white-space separated words, as the simulator's /tokenize.
func words(_ context.Context, s string) (int, error) { return len(strings.Fields(s)), nil }

func noTokenize(context.Context, string) (int, error) {
	return 0, fmt.Errorf("tokenize: POST /tokenize answered 404: %w", openai.ErrNoTokenize)
}

func outs(texts ...string) []Output {
	o := make([]Output, len(texts))
	for i, t := range texts {
		o[i] = Output{Text: t}
	}
	return o
}

// TestCompareAndCheck: identical outputs pass; outputs that differ late
// (drift) pass by default; outputs that differ early fail, naming the share
// and the position; the identical share fails only when set.
func TestCompareAndCheck(t *testing.T) {
	t.Parallel()
	old := outs("a b c d e f g h i j k l", "a b c d e f g h i j k l", "x y z w v u t s r q p o", "m n o p q r s t u v w x")
	late := outs("a b c d e f g h i j k Z", "a b c d e f g h i j k l", "x y z w v u t s r q p o", "m n o p q r s t u v Q x")
	early := outs("a Z c d e f g h i j k l", "B b c d e f g h i j k l", "x y z w v u t s r q p o", "m n o p q r s t u v w x")
	for _, tc := range []struct {
		name      string
		nw        []Output
		tok       Tokenizer
		set       thresholds.Parity
		identical int
		diffs     []int
		fail      []string
	}{
		{name: "same", nw: old, tok: words, set: thresholds.DefaultParity, identical: 4},
		{name: "drift", nw: late, tok: words, set: thresholds.DefaultParity, identical: 2, diffs: []int{11, 10}},
		{name: "drift, identical share required", nw: late, tok: words, set: thresholds.Parity{Prompts: 4, MinIdentical: 0.9, EarlyTokens: 8, MaxEarly: 0.25},
			identical: 2, diffs: []int{11, 10}, fail: []string{"50% of the greedy outputs are identical, below parity.min_identical 90%"}},
		{name: "early", nw: early, tok: words, set: thresholds.DefaultParity, identical: 2, diffs: []int{1, 0},
			fail: []string{"50% of the greedy outputs (2 of 4) differ before token 8, above parity.max_early 25%"}},
		{name: "no tokenize", nw: early, tok: noTokenize, set: thresholds.DefaultParity, identical: 2, diffs: []int{1, 0},
			fail: []string{"differ before word 8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Compare(context.Background(), "profile=basic/scenario=s/conc=1", old, tc.nw, tc.tok)
			if err != nil {
				t.Fatal(err)
			}
			if p.Identical != tc.identical || fmt.Sprint(p.FirstDiff) != fmt.Sprint(tc.diffs) && len(tc.diffs) > 0 {
				t.Errorf("identical %d, first differences %v; want %d, %v", p.Identical, p.FirstDiff, tc.identical, tc.diffs)
			}
			r := &Report{Points: []Point{p}, Settings: tc.set}
			got := r.Check()
			if len(got) != len(tc.fail) {
				t.Fatalf("Check() = %q, want %d reasons like %q\n%s", got, len(tc.fail), tc.fail, r.Summary())
			}
			for i, f := range tc.fail {
				if !strings.Contains(got[i], f) {
					t.Errorf("reason %q does not say %q", got[i], f)
				}
			}
			if s := r.Summary(); !strings.Contains(s, fmt.Sprintf("%d of 4 greedy outputs identical", tc.identical)) {
				t.Errorf("summary %q does not give the identical share", s)
			}
		})
	}
	if _, err := Compare(context.Background(), "x", old, old[:1], words); err == nil {
		t.Error("outputs of different counts compared without an error")
	}
}

// TestRequests: fixed, greedy, capped and the same every time.
func TestRequests(t *testing.T) {
	t.Parallel()
	sc, err := scenario.Builtin("ttft-tpot")
	if err != nil {
		t.Fatal(err)
	}
	pt := sc.Points(scenario.Quick)[0]
	set := thresholds.Parity{Prompts: 3, MaxTokens: 5}
	a, err := Requests("m", pt, set)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Requests("m", pt, set)
	if len(a) != 3 {
		t.Fatalf("%d requests, want 3", len(a))
	}
	for i := range a {
		if a[i].Temperature != 0 || !a[i].KeepText || a[i].MaxTokens > 5 || a[i].Prompt != b[i].Prompt || a[i].Prompt == "" {
			t.Errorf("request %d: %+v", i, a[i])
		}
	}
	if none, _ := Requests("m", pt, thresholds.Parity{}); none != nil {
		t.Errorf("prompts 0: %d requests, want none", len(none))
	}
}
