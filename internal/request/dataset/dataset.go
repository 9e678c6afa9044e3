// Package dataset reads the prompts users bring: a ShareGPT JSON file, a
// JSON-lines file of prompts (or chat messages) with their output lengths,
// and a timed trace (JSON lines with a timestamp per request). Read parses
// a file into Entries; Select filters them by length, samples them with a
// seed and takes NumPrompts, as `vllm bench serve` does for ShareGPT.
//
// The formats:
//
//	ShareGPT   [{"id": "…", "conversations": [{"from": "human", "value": "…"},
//	             {"from": "gpt", "value": "…"}, …]}, …]
//	           The first message is the prompt and the second the reply
//	           whose length is the request's output length (vLLM's
//	           ShareGPTDataset); entries with fewer than two are skipped.
//	JSONL      {"prompt": "…", "output_len": N}, or
//	           {"messages": [{"role": "system"|"user"|"assistant",
//	           "content": "…"}, …], "output_len": N}: the last message is the
//	           user's, earlier ones the system prompt and the history.
//	trace      JSONL as above, each line with "timestamp": seconds from any
//	           origin, non-decreasing: the requests arrive at those offsets
//	           from the first (scaled by Options.Speed).
//
// Lengths are counted in words (white-space separated) while selecting,
// before any server is known; the harness asks the served model's
// tokenizer (/tokenize) for the exact counts and reports them.
package dataset

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
)

// Format is a data set's file format.
type Format string

// The formats Read recognizes.
const (
	ShareGPT Format = "sharegpt"
	JSONL    Format = "jsonl"
	Trace    Format = "trace"
)

// Entry is one request of a data set.
type Entry struct {
	// ID is the entry's id (ShareGPT) or its line ("line 3").
	ID string
	// System, History and Prompt are the messages sent: a system prompt
	// (may be empty), earlier exchanges, and the user's message.
	System  string
	History []openai.Turn
	Prompt  string
	// OutputLen is the completion length asked for (max_tokens): the
	// reply's words for ShareGPT, output_len for JSONL and traces.
	OutputLen int
	// At is the arrival offset of a trace's request from the trace's
	// first (0 for other formats).
	At time.Duration
}

// PromptWords counts the words of every message the entry sends.
func (e Entry) PromptWords() int {
	n := Words(e.System) + Words(e.Prompt)
	for _, t := range e.History {
		n += Words(t.User) + Words(t.Assistant)
	}
	return n
}

// Words counts the white-space separated words of s.
func Words(s string) int { return len(strings.Fields(s)) }

// File is a parsed data set file.
type File struct {
	// Name is the file's base name.
	Name string
	// Format is the file's format.
	Format Format
	// Entries are the file's usable entries, in file order.
	Entries []Entry
	// Skipped counts ShareGPT entries without a prompt and a reply.
	Skipped int
}

// Open reads the data set called name: the file of that name in builtin
// (fixtures.DatasetFS: the embedded ones) when there is one, else the file
// at that path.
func Open(builtin fs.FS, name string) (*File, error) {
	if builtin != nil && fs.ValidPath(name) {
		if data, err := fs.ReadFile(builtin, name); err == nil {
			return Parse(name, data)
		}
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w (built-in data sets: %s)", err, strings.Join(builtinNames(builtin), ", "))
	}
	return Parse(filepath.Base(name), data)
}

// builtinNames lists the files of builtin.
func builtinNames(builtin fs.FS) []string {
	if builtin == nil {
		return []string{"none"}
	}
	entries, _ := fs.ReadDir(builtin, ".")
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// Parse parses a data set's bytes; name names it in errors. The format
// follows from the content: a JSON array is ShareGPT, JSON lines with a
// timestamp a trace, other JSON lines JSONL.
func Parse(name string, data []byte) (*File, error) {
	f := &File{Name: name}
	var err error
	trimmed := bytes.TrimSpace(data)
	switch {
	case len(trimmed) == 0:
		return nil, fmt.Errorf("dataset %s: the file is empty: give a ShareGPT JSON array or JSON lines of {\"prompt\", \"output_len\"}", name)
	case trimmed[0] == '[':
		f.Format = ShareGPT
		f.Entries, f.Skipped, err = parseShareGPT(trimmed)
	default:
		f.Entries, f.Format, err = parseLines(data)
	}
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", name, err)
	}
	if len(f.Entries) == 0 {
		return nil, fmt.Errorf("dataset %s: no usable entry (%d skipped without a prompt and a reply)", name, f.Skipped)
	}
	return f, nil
}

// Set is the selection of a data set a run sends: its entries in the
// order they are sent, and what identifies it in results.
type Set struct {
	// Name is the file's base name; Format its format.
	Name   string
	Format Format
	// Entries are the selected requests, in the order they are sent.
	Entries []Entry
	// Timed says that Entries carry arrival offsets (a trace) to replay.
	Timed bool
	// Hash is the SHA-256 of the selected requests (messages, output
	// lengths, arrival offsets), hex: two runs with equal hashes sent the
	// same data.
	Hash string
}

// ConfigKey is the benchfmt configuration key that names a run's data
// set (benchname.ConfigDataset); the gate refuses to compare results whose
// values differ.
const ConfigKey = benchname.ConfigDataset

// Describe is the set's configuration value: "NAME requests=N sha256=H"
// with the hash's first 16 hex digits.
func (s *Set) Describe() string {
	return fmt.Sprintf("%s requests=%d sha256=%s", s.Name, len(s.Entries), s.Hash[:16])
}

// Arrivals are the selected requests' arrival offsets (a trace's).
func (s *Set) Arrivals() []time.Duration {
	out := make([]time.Duration, len(s.Entries))
	for i, e := range s.Entries {
		out[i] = e.At
	}
	return out
}

// Longest is the entry that needs the most context: prompt words plus
// output length.
func (s *Set) Longest() Entry {
	var best Entry
	for _, e := range s.Entries {
		if e.PromptWords()+e.OutputLen > best.PromptWords()+best.OutputLen {
			best = e
		}
	}
	return best
}

// hash digests the selected entries.
func hash(entries []Entry) string {
	h := sha256.New()
	put := func(s string) {
		_ = binary.Write(h, binary.LittleEndian, uint64(len(s)))
		h.Write([]byte(s))
	}
	for _, e := range entries {
		put(e.System)
		for _, t := range e.History {
			put(t.User)
			put(t.Assistant)
		}
		put(e.Prompt)
		_ = binary.Write(h, binary.LittleEndian, [3]int64{int64(len(e.History)), int64(e.OutputLen), int64(e.At)})
	}
	return hex.EncodeToString(h.Sum(nil))
}
