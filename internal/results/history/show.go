package history

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// ShowFormats are the formats of `vllmperf history show --format`.
var ShowFormats = []string{"table", "csv", "json"}

// Show writes the key histories: a table of runs (one line per run), or
// every value of the selected series as CSV (one row per run, benchmark
// and unit) or JSON (one object per run).
func Show(w io.Writer, khs []*KeyHistory, format string) error {
	switch format {
	case "table":
		return showTable(w, khs)
	case "csv":
		return showCSV(w, khs)
	case "json":
		return showJSON(w, khs)
	}
	return badInput("{Format} %q: want %s", format, strings.Join(ShowFormats, ", "))
}

func showTable(w io.Writer, khs []*KeyHistory) error {
	ew := &verdict.ErrWriter{W: w}
	for i, kh := range khs {
		if i > 0 {
			ew.Printf("\n")
		}
		ew.Printf("%s: %s, %s\n", kh.Key, plural(len(kh.Runs), "run", "runs"), plural(len(kh.Series), "series", "series"))
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "run\tid\tdate (UTC)\tcommit\timage\tvLLM\tbenchmarks\tchecks\tevents")
		events := map[int][]string{}
		for _, e := range kh.Events {
			events[e.Run] = append(events[e.Run], e.Text)
		}
		for j, r := range kh.Runs {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", j+1, r.ID, r.Date.Format(time.DateTime), shortCommit(r.Commit),
				r.Config["image"], r.Config["vllm-version"], r.Record.Benchmarks, r.Checks.String(), strings.Join(events[j], "; "))
		}
		if err := tw.Flush(); err != nil && ew.Err == nil {
			ew.Err = err
		}
	}
	return ew.Err
}

// CSVHeader is the header row of `history show --format csv`.
var CSVHeader = []string{"key", "run", "id", "date", "commit", "ref", "image", "vllm_version", "benchmark", "unit", "better", "repetitions", "median", "values"}

func showCSV(w io.Writer, khs []*KeyHistory) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	for _, kh := range khs {
		for _, row := range rows(kh) {
			r, s, p := kh.Runs[row.point.Run], row.series, row.point
			vals := make([]string, len(p.Values))
			for i, v := range p.Values {
				vals[i] = strconv.FormatFloat(v, 'g', -1, 64)
			}
			rec := []string{kh.Key, strconv.Itoa(p.Run + 1), r.ID, r.Date.Format(time.RFC3339), r.Commit, r.Ref, r.Config["image"], r.Config["vllm-version"],
				s.Benchmark, s.Unit, s.Direction.String(), strconv.Itoa(len(p.Values)), strconv.FormatFloat(p.Median, 'g', -1, 64), strings.Join(vals, ";")}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

type seriesPoint struct {
	series *Series
	point  Point
}

// rows lists every point of the key's series in run order, then series
// order.
func rows(kh *KeyHistory) []seriesPoint {
	var out []seriesPoint
	for _, s := range kh.Series {
		for _, p := range s.Points {
			out = append(out, seriesPoint{s, p})
		}
	}
	slices.SortStableFunc(out, func(a, b seriesPoint) int { return a.point.Run - b.point.Run })
	return out
}

type jsonShowRun struct {
	Key    string   `json:"key"`
	Run    int      `json:"run"`
	Record Record   `json:"record"`
	Events []string `json:"events"`
	// Benchmarks maps a benchmark to its units' values (one per
	// repetition) for the series selected.
	Benchmarks map[string]map[string][]float64 `json:"benchmarks"`
}

func showJSON(w io.Writer, khs []*KeyHistory) error {
	out := []jsonShowRun{}
	for _, kh := range khs {
		start := len(out)
		for i, r := range kh.Runs {
			out = append(out, jsonShowRun{Key: kh.Key, Run: i + 1, Record: r.Record, Events: []string{}, Benchmarks: map[string]map[string][]float64{}})
		}
		for _, e := range kh.Events {
			out[start+e.Run].Events = append(out[start+e.Run].Events, e.Text)
		}
		for _, row := range rows(kh) {
			b := out[start+row.point.Run].Benchmarks
			if b[row.series.Benchmark] == nil {
				b[row.series.Benchmark] = map[string][]float64{}
			}
			b[row.series.Benchmark][row.series.Unit] = row.point.Values
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
