package dataset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/openai"
)

// shareGPTEntry is one conversation of a ShareGPT file.
type shareGPTEntry struct {
	ID            string `json:"id"`
	Conversations []struct {
		From  string `json:"from"`
		Value string `json:"value"`
	} `json:"conversations"`
}

// parseShareGPT reads a ShareGPT array: the first message of each
// conversation is the prompt, the second the reply whose length is the
// output length; entries with fewer than two messages, an empty prompt or
// an empty reply (no completion length to ask for) are skipped.
func parseShareGPT(data []byte) ([]Entry, int, error) {
	var raw []shareGPTEntry
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return nil, 0, fmt.Errorf("not a ShareGPT JSON array of {\"id\", \"conversations\": [{\"from\", \"value\"}]}: %w", err)
	}
	var out []Entry
	skipped := 0
	for i, c := range raw {
		if len(c.Conversations) < 2 || strings.TrimSpace(c.Conversations[0].Value) == "" || Words(c.Conversations[1].Value) < 1 {
			skipped++
			continue
		}
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("entry %d", i)
		}
		out = append(out, Entry{ID: id, Prompt: c.Conversations[0].Value, OutputLen: Words(c.Conversations[1].Value)})
	}
	return out, skipped, nil
}

// lineRecord is one line of a JSONL file or a trace.
type lineRecord struct {
	Prompt    *string   `json:"prompt"`
	Messages  []message `json:"messages"`
	OutputLen *int      `json:"output_len"`
	Timestamp *float64  `json:"timestamp"`
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// parseLines reads JSON lines; a file whose lines carry timestamps is a
// trace (every line then must), other files are JSONL.
func parseLines(data []byte) ([]Entry, Format, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	var out []Entry
	var stamps []float64
	timed := -1 // unknown until the first record
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		e, ts, err := parseRecord(text)
		if err != nil {
			return nil, "", fmt.Errorf("line %d: %w", line, err)
		}
		e.ID = fmt.Sprintf("line %d", line)
		has := 0
		if ts != nil {
			has = 1
			stamps = append(stamps, *ts)
		}
		if timed >= 0 && has != timed {
			return nil, "", fmt.Errorf("line %d: some lines have a \"timestamp\" and others not: a trace needs one on every line, a JSONL file none", line)
		}
		timed = has
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, "", err
	}
	if timed != 1 {
		return out, JSONL, nil
	}
	return out, Trace, setArrivals(out, stamps)
}

// parseRecord reads one line: its entry and its timestamp (nil: none).
func parseRecord(text []byte) (Entry, *float64, error) {
	var r lineRecord
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Entry{}, nil, fmt.Errorf("want {\"prompt\": \"…\", \"output_len\": N} or {\"messages\": [{\"role\", \"content\"}], \"output_len\": N}, with \"timestamp\" in a trace: %w", err)
	}
	var e Entry
	switch {
	case r.Prompt != nil && r.Messages != nil:
		return e, nil, errors.New("\"prompt\" and \"messages\" exclude each other: give one")
	case r.Prompt != nil:
		if strings.TrimSpace(*r.Prompt) == "" {
			return e, nil, errors.New("\"prompt\" is empty")
		}
		e.Prompt = *r.Prompt
	case r.Messages != nil:
		var err error
		if e.System, e.History, e.Prompt, err = conversation(r.Messages); err != nil {
			return e, nil, err
		}
	default:
		return e, nil, errors.New("no \"prompt\" and no \"messages\": give one")
	}
	if r.OutputLen == nil || *r.OutputLen < 1 {
		return e, nil, errors.New("\"output_len\" missing or below 1: give the completion tokens to ask for")
	}
	e.OutputLen = *r.OutputLen
	if r.Timestamp != nil && (math.IsNaN(*r.Timestamp) || math.IsInf(*r.Timestamp, 0)) {
		return e, nil, errors.New("\"timestamp\" is not a finite number of seconds")
	}
	return e, r.Timestamp, nil
}

// conversation splits chat messages into a system prompt, the history of
// user/assistant exchanges and the last user message.
func conversation(ms []message) (system string, history []openai.Turn, prompt string, err error) {
	if len(ms) > 0 && ms[0].Role == "system" {
		system, ms = ms[0].Content, ms[1:]
	}
	if len(ms)%2 != 1 {
		return "", nil, "", fmt.Errorf("\"messages\": want an optional system message, then user and assistant in turn, ending with the user's; got %d after the system message", len(ms))
	}
	for i, m := range ms {
		want := "user"
		if i%2 == 1 {
			want = "assistant"
		}
		if m.Role != want {
			return "", nil, "", fmt.Errorf("\"messages\"[%d]: role %q where %q was expected (user and assistant take turns, the user first and last)", i, m.Role, want)
		}
	}
	for i := 0; i+1 < len(ms); i += 2 {
		history = append(history, openai.Turn{User: ms[i].Content, Assistant: ms[i+1].Content})
	}
	prompt = ms[len(ms)-1].Content
	if strings.TrimSpace(prompt) == "" {
		return "", nil, "", errors.New("\"messages\": the last user message is empty")
	}
	return system, history, prompt, nil
}

// setArrivals turns a trace's timestamps into offsets from the first.
func setArrivals(entries []Entry, stamps []float64) error {
	for i := range entries {
		if i > 0 && stamps[i] < stamps[i-1] {
			return fmt.Errorf("%s: timestamp %v is before the previous line's %v: sort the trace by time", entries[i].ID, stamps[i], stamps[i-1])
		}
		if span := stamps[i] - stamps[0]; span > MaxTraceSpan.Seconds() {
			return fmt.Errorf("%s: timestamp %v is %.0f s after the first line's %v; a trace replays in real time, at most %v: give seconds (not milliseconds) or cut the trace", entries[i].ID, stamps[i], span, stamps[0], MaxTraceSpan)
		}
		entries[i].At = time.Duration((stamps[i] - stamps[0]) * float64(time.Second))
	}
	return nil
}

// MaxTraceSpan bounds a trace's replay, from its first timestamp to its
// last: a week, far past any benchmark and far below the ~292 years at
// which the offset would overflow a time.Duration.
const MaxTraceSpan = 7 * 24 * time.Hour
