package calibration

import (
	"github.com/vllmperf/vllmperf/internal/strictyaml"

	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// data holds the calibration set, one YAML file per source.
//
//go:embed data/*.yaml
var data embed.FS

// dataDir is the folder of the embedded calibration files.
const dataDir = "data"

// Load reads and validates the embedded calibration set: every row of every
// file under data/, in file name order and file order within a file.
func Load() ([]Row, error) { return LoadFS(data, dataDir) }

// LoadFS reads and validates every *.yaml file in dir of fsys as one
// calibration set: each file is parsed strictly, then row ids must be unique
// across files and every row's split must be the one the split rule assigns
// (see ExpectedSplit). All problems found are returned together.
func LoadFS(fsys fs.FS, dir string) ([]Row, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("read calibration data: %w", err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".yaml") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("read calibration data: no *.yaml file in %s", dir)
	}
	var rows []Row
	var errs []error
	for _, n := range names {
		file := path.Join(dir, n)
		b, err := fs.ReadFile(fsys, file)
		if err != nil {
			errs = append(errs, fmt.Errorf("read calibration data: %w", err))
			continue
		}
		rs, err := Parse(file, b)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rows = append(rows, rs...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if err := checkSet(rows); err != nil {
		return nil, err
	}
	return rows, nil
}

// checkSet runs the checks that span files: unique ids and the split rule.
func checkSet(rows []Row) error {
	var errs []error
	first := map[string]Row{}
	for _, r := range rows {
		if prev, dup := first[r.ID]; dup {
			errs = append(errs, &Error{File: r.File, Line: r.Line, Row: r.ID,
				Msg: fmt.Sprintf("id is also used at %s:%d: row ids must be unique across the set", prev.File, prev.Line)})
			continue
		}
		first[r.ID] = r
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	want := ExpectedSplit(rows)
	for _, r := range rows {
		if w := want[r.ID]; r.Split != w {
			errs = append(errs, &Error{File: r.File, Line: r.Line, Row: r.ID,
				Msg: fmt.Sprintf("split is %q but the split rule assigns %q: write `split: %s` (the rule is in README.md; never move a row by hand)", r.Split, w, w)})
		}
	}
	return errors.Join(errs...)
}

// Error is a problem in a calibration file, located by line where known.
type Error struct {
	File string // the file
	Line int    // 1-based; 0 when the whole file is at fault
	Row  string // the row id, when the problem is in a row
	Msg  string // what is wrong and how to fix it
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	if e.Row != "" {
		return fmt.Sprintf("%s: row %s: %s", loc, e.Row, e.Msg)
	}
	return loc + ": " + e.Msg
}

// The YAML shape of a calibration file. Pointers tell an absent value from
// an explicit zero, which validation rejects.
type (
	fileDoc struct {
		Source sourceDoc `yaml:"source"`
		Rows   []rowDoc  `yaml:"rows"`
	}
	sourceDoc struct {
		ID        string `yaml:"id"`
		Title     string `yaml:"title"`
		Publisher string `yaml:"publisher"`
		URL       string `yaml:"url"`
		Note      string `yaml:"note"`
	}
	rowDoc struct {
		ID       string      `yaml:"id"`
		Split    string      `yaml:"split"`
		Locator  string      `yaml:"locator"`
		Note     string      `yaml:"note"`
		Hardware hardwareDoc `yaml:"hardware"`
		Model    modelDoc    `yaml:"model"`
		Server   serverDoc   `yaml:"server"`
		Workload workloadDoc `yaml:"workload"`
		Measured measuredDoc `yaml:"measured"`
	}
	hardwareDoc struct {
		GPU       string `yaml:"gpu"`
		Published string `yaml:"published"`
		Count     *int   `yaml:"count"`
		Note      string `yaml:"note"`
	}
	modelDoc struct {
		Preset    string `yaml:"preset"`
		Published string `yaml:"published"`
		Shape     string `yaml:"shape"`
		Note      string `yaml:"note"`
		Dtype     string `yaml:"dtype"`
	}
	serverDoc struct {
		VLLMVersion string    `yaml:"vllm_version"`
		Command     string    `yaml:"command"`
		Flags       yaml.Node `yaml:"flags"`
	}
	workloadDoc struct {
		Client            string  `yaml:"client"`
		Endpoint          string  `yaml:"endpoint"`
		Dataset           string  `yaml:"dataset"`
		InputTokens       *int    `yaml:"input_tokens"`
		OutputTokens      *int    `yaml:"output_tokens"`
		TotalInputTokens  *int    `yaml:"total_input_tokens"`
		TotalOutputTokens *int    `yaml:"total_output_tokens"`
		LengthsPublished  *bool   `yaml:"lengths_published"`
		IgnoreEOS         *bool   `yaml:"ignore_eos"`
		Concurrency       *int    `yaml:"concurrency"`
		RequestRate       *string `yaml:"request_rate"`
		NumPrompts        *int    `yaml:"num_prompts"`
	}
	measuredDoc struct {
		DurationS         *float64    `yaml:"duration_s"`
		Completed         *int        `yaml:"completed"`
		RequestThroughput *float64    `yaml:"request_throughput"`
		OutputThroughput  *float64    `yaml:"output_throughput"`
		TotalThroughput   *float64    `yaml:"total_throughput"`
		TTFT              *latencyDoc `yaml:"ttft_ms"`
		TPOT              *latencyDoc `yaml:"tpot_ms"`
		ITL               *latencyDoc `yaml:"itl_ms"`
		E2EL              *latencyDoc `yaml:"e2el_ms"`
	}
	latencyDoc struct {
		Mean   *float64 `yaml:"mean"`
		Median *float64 `yaml:"median"`
		P95    *float64 `yaml:"p95"`
		P99    *float64 `yaml:"p99"`
	}
)

// Parse parses and validates one calibration file; name locates it in
// errors. Checks that span files (unique ids across files, the split rule)
// are LoadFS's.
func Parse(name string, b []byte) ([]Row, error) {
	var doc fileDoc
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		return nil, yamlError(name, err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return nil, &Error{File: name, Line: more.Line, Msg: "a second YAML document: a calibration file holds one document (remove the extra ---)"}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, yamlError(name, err)
	}
	top := &root
	if top.Kind == yaml.DocumentNode && len(top.Content) > 0 {
		top = top.Content[0]
	}
	rowNodes := strictyaml.Lookup(top, "rows")
	if rowNodes != nil && rowNodes.Kind == yaml.AliasNode {
		rowNodes = rowNodes.Alias
	}

	var errs []error
	src, srcErrs := convertSource(name, top, doc.Source)
	errs = append(errs, srcErrs...)
	if rowNodes == nil || len(doc.Rows) == 0 {
		errs = append(errs, &Error{File: name, Line: top.Line, Msg: "no rows: add `rows:` with at least one row (or delete the file)"})
		return nil, errors.Join(errs...)
	}
	if len(rowNodes.Content) != len(doc.Rows) {
		errs = append(errs, &Error{File: name, Line: rowNodes.Line, Msg: "rows: write the rows out as a list (one `- id: ...` item per row)"})
		return nil, errors.Join(errs...)
	}
	rows := make([]Row, 0, len(doc.Rows))
	seen := map[string]int{}
	for i, rd := range doc.Rows {
		c := &converter{file: name, node: rowNodes.Content[i], id: rd.ID}
		r := c.row(rd, src)
		if prev, dup := seen[r.ID]; dup && r.ID != "" {
			c.errf(nil, "id is also used on line %d: row ids must be unique", prev)
		}
		seen[r.ID] = r.Line
		if len(c.errs) > 0 {
			errs = append(errs, c.errs...)
			continue
		}
		rows = append(rows, r)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return rows, nil
}

// yamlError turns a decoder error into an *Error with the line it names.
func yamlError(name string, err error) error {
	if errors.Is(err, io.EOF) {
		return &Error{File: name, Msg: "empty file: a calibration file needs `source:` and `rows:`"}
	}
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		var errs []error
		for _, m := range te.Errors {
			line, msg := splitLine(m)
			if field, ok := strings.CutPrefix(msg, "field "); ok {
				if key, _, ok := strings.Cut(field, " not found"); ok {
					msg = fmt.Sprintf("unknown key %q: check its spelling against the keys listed in README.md", key)
				}
			}
			errs = append(errs, &Error{File: name, Line: line, Msg: msg})
		}
		return errors.Join(errs...)
	}
	line, msg := splitLine(strings.TrimPrefix(err.Error(), "yaml: "))
	return &Error{File: name, Line: line, Msg: "invalid YAML: " + msg}
}

// splitLine splits yaml.v3's "line N: message" into N and the message.
func splitLine(msg string) (int, string) {
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, tail, ok := strings.Cut(rest, ": "); ok {
			if l, err := strconv.Atoi(n); err == nil {
				return l, tail
			}
		}
	}
	return 0, msg
}

// keyLine returns the line of the deepest key of path found under n, so a
// message points at the field it is about (or at its nearest parent).
func keyLine(n *yaml.Node, keys ...string) int {
	line := n.Line
	cur := n
	for _, k := range keys {
		if cur == nil || cur.Kind != yaml.MappingNode {
			break
		}
		found := false
		for i := 0; i+1 < len(cur.Content); i += 2 {
			if cur.Content[i].Value == k {
				line = cur.Content[i].Line
				cur = cur.Content[i+1]
				found = true
				break
			}
		}
		if !found {
			break
		}
	}
	return line
}
