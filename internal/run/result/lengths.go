package result

import (
	"fmt"
	"io"
	"strings"

	"github.com/vllmperf/vllmperf/internal/run/sample"
)

// Lengths is what a run knows about its prompts' lengths in tokens: the
// served model's own counts, from its POST /tokenize, or, without one,
// the usage counts of the responses.
type Lengths struct {
	// Tokenize says whether the server answered /tokenize.
	Tokenize bool
	// Adjusted says that the synthetic prompts were rebuilt to the served
	// model's tokens per word (its tokenizer does not count one token a
	// vocabulary word), so that they hold their declared length.
	Adjusted bool
	// Classes has one entry per class, in the mix's order.
	Classes []ClassLength
	// Mismatched counts measured requests whose usage prompt_tokens
	// differ from what /tokenize counted for them.
	Mismatched int
	// Counts is /tokenize's count by request index (absent: not asked),
	// set by the pipeline before the load.
	Counts map[int]int
}

// ClassLength is one class's prompt lengths, in tokens.
type ClassLength struct {
	Class string
	// Declared is a synthetic class's declared prompt length (its own
	// prompt and the shared system prompt); 0 for fixed text, chats and
	// data sets, whose lengths are what they are.
	Declared int
	// Text is the mean /tokenize count of the first requests' prompt text
	// alone (system and user message, no template): what Declared
	// promises (0 without /tokenize).
	Text float64
	// Tokenized is the mean /tokenize count of the class's measured
	// requests as sent (chat template included), over Requests of them
	// (those asked: up to pipeline.MaxTokenized, a live chat's first turns).
	Tokenized float64
	Requests  int
	// Served is the mean prompt_tokens the server reported for the class's
	// successful measured requests (0 when none reported any).
	Served float64
}

// Tokens is the class's measured prompt length: /tokenize's count when
// the server has it, else the usage counts.
func (c ClassLength) Tokens() float64 {
	if c.Requests > 0 {
		return c.Tokenized
	}
	return c.Served
}

// Mean is the mean prompt tokens of samples: /tokenize's count of each
// request asked, else its usage count; ok is false when none has either.
func (l *Lengths) Mean(samples []sample.Sample) (mean float64, ok bool) {
	sum, n := 0, 0
	for _, s := range samples {
		v, asked := l.Counts[s.Index]
		if !asked {
			v = s.PromptTokens
		}
		if v > 0 {
			sum += v
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return float64(sum) / float64(n), true
}

// writeLengths writes one line per class: declared, measured, served.
func (l *Lengths) writeLengths(w io.Writer) error {
	source := "usage only (no /tokenize)"
	if l.Tokenize {
		source = "/tokenize"
		if l.Adjusted {
			source += ", prompts adjusted to the model's tokens per word"
		}
	}
	if _, err := fmt.Fprintf(w, "%s\n", center("Prompt tokens: "+source)); err != nil {
		return err
	}
	for _, c := range l.Classes {
		var parts []string
		if c.Declared > 0 {
			parts = append(parts, fmt.Sprintf("declared %d", c.Declared))
		}
		if l.Tokenize && c.Declared > 0 {
			parts = append(parts, fmt.Sprintf("text %.1f", c.Text))
		}
		if c.Requests > 0 {
			parts = append(parts, fmt.Sprintf("/tokenize %.1f (%d requests)", c.Tokenized, c.Requests))
		}
		parts = append(parts, fmt.Sprintf("served %.1f", c.Served))
		if _, err := fmt.Fprintf(w, "%-12s %s\n", c.Class, strings.Join(parts, ", ")); err != nil {
			return err
		}
	}
	return nil
}

// center centers a title in vLLM's 50-column rule of dashes.
func center(title string) string {
	title = " " + title + " "
	pad := max(0, 50-len([]rune(title)))
	return strings.Repeat("-", pad/2) + title + strings.Repeat("-", pad-pad/2)
}
