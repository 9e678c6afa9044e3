package history

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// Formats are the ways the report is written (verdict.Output publishes it).
func (r *CheckReport) Formats() []verdict.Format {
	return []verdict.Format{{Name: "text", Write: r.WriteText}, {Name: "markdown", Write: r.WriteMarkdown}, {Name: "json", Write: r.WriteJSON}}
}

// CheckFormats are the formats of `vllmperf history check --format`.
var CheckFormats = verdict.FormatNames((&CheckReport{}).Formats())

// Headline is the one-line result: "FAIL: 6 change points, 6 regressions".
func (r *CheckReport) Headline() string {
	o := r.Outcome()
	switch {
	case o == verdict.OutcomeInconclusive:
		return fmt.Sprintf("%s: no series could be tested: %s; a series needs %d runs (2 × --min-size %d) and more than one value",
			o, r.keyRuns(), 2*r.Options.MinSize, r.Options.MinSize)
	case len(r.Changes) == 0:
		return fmt.Sprintf("%s: no change point in %d series (%s)", o, r.Tested, r.keyRuns())
	}
	reg := "no regression"
	switch n := r.Regressions(); n {
	case 0:
	case 1:
		reg = "1 regression"
	default:
		reg = fmt.Sprintf("%d regressions", n)
	}
	return fmt.Sprintf("%s: %s in %d series, %s (largest %s %s of %s from run %d)", o, plural(len(r.Changes), "change point", "change points"),
		r.Tested, reg, fmtPct(r.Changes[0].ChangePct), r.Changes[0].Unit, r.Changes[0].Benchmark, r.Changes[0].Run.Index+1)
}

func (r *CheckReport) keyRuns() string {
	var parts []string
	for _, k := range r.Keys {
		parts = append(parts, plural(k.Runs, "run", "runs")+" of "+k.Key)
	}
	return strings.Join(parts, "; ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Method describes the test in one sentence, with its numbers.
func (r *CheckReport) Method() string {
	o := r.Options
	profiles := 0
	for _, k := range r.Keys {
		profiles += k.Profiles
	}
	s := fmt.Sprintf("E-divisive means over each gated unit's series of run medians and each profile's geometric mean of them; permutation test (at most %d permutations); Benjamini-Hochberg at %s over %d series (%d of them profiles')", o.Permutations, plainPct(o.Alpha), r.Tested, profiles)
	if r.Tested > 0 {
		if r.Cutoff > 0 {
			s += fmt.Sprintf(": significant at p ≤ %s", FormatP(r.Cutoff))
		} else {
			s += fmt.Sprintf(": nothing significant (the first step needs p ≤ %s)", FormatP(r.FirstStep))
		}
	}
	return s + fmt.Sprintf("; a profile's benchmarks tested at its change points; changes under %s dropped; at least %d runs a side", plainPct(o.MinChange), o.MinSize)
}

// WriteText writes the report for a terminal.
func (r *CheckReport) WriteText(w io.Writer) error {
	ew := &verdict.ErrWriter{W: w}
	ew.Printf("history check: %s\n", r.Method())
	for _, k := range r.Keys {
		ew.Printf("  %s: %s, %s … %s; %d series tested (%d of them profiles'), %d constant, %d too short, %d without a direction\n",
			k.Key, plural(k.Runs, "run", "runs"), k.First.ID, k.Last.ID, k.Tested, k.Profiles, k.Constant, k.Short, k.NotGated)
		for _, e := range k.Events {
			ew.Printf("    event at run %d (%s): %s\n", e.Run+1, e.RunID, e.Text)
		}
	}
	if len(r.Changes) > 0 {
		ew.Printf("\n")
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "change\tsize\tunit\tbenchmark\tbefore → after\tfrom run\tp\tconfidence\tfound by\tevents")
		for _, c := range r.Changes {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d %s\t%s\t%s\t%s\t%s\n", c.Kind(), fmtPct(c.ChangePct), c.Unit, c.Benchmark,
				c.Levels(), c.Run.Index+1, c.Run.ID, c.PText(), c.ConfidenceText(), c.FoundBy(), c.EventText())
		}
		if err := tw.Flush(); err != nil && ew.Err == nil {
			ew.Err = err
		}
		for _, c := range r.Changes {
			if br := c.BisectRange(); c.Regression && br != "" {
				ew.Printf("  %s in %s: %s\n", c.Unit, c.Benchmark, br)
			}
		}
	}
	ew.Printf("\n%s\n", r.Headline())
	return ew.Err
}

// MarkdownDetails is how many changes, the largest, the markdown report
// lists the runs around.
const MarkdownDetails = 10

// WriteMarkdown writes the report for GitHub's job summary: a warning
// with the changes, and for the MarkdownDetails largest the runs around
// them.
func (r *CheckReport) WriteMarkdown(w io.Writer) error {
	ew := &verdict.ErrWriter{W: w}
	ew.Printf("### History check\n\n")
	if len(r.Changes) > 0 {
		ew.Printf("> [!WARNING]\n> **%s**\n\n", mdCell(r.Headline()))
	} else {
		ew.Printf("**%s**\n\n", mdCell(r.Headline()))
	}
	ew.Printf("%s (docs/history.md).\n\n", mdCell(r.Method()))
	for _, k := range r.Keys {
		ew.Printf("- `%s`: %d runs, `%s` … `%s`, %d series tested (%d of them profiles')\n", k.Key, k.Runs, k.First.ID, k.Last.ID, k.Tested, k.Profiles)
		for _, e := range k.Events {
			ew.Printf("  - event at run %d (`%s`): %s\n", e.Run+1, e.RunID, mdCell(e.Text))
		}
	}
	if len(r.Changes) == 0 {
		return ew.Err
	}
	ew.Printf("\n| change | size | unit | benchmark | before → after | from run | p | found by | events |\n|---|--:|---|---|---|---|--:|---|---|\n")
	for _, c := range r.Changes {
		ew.Printf("| %s | %s | `%s` | `%s` | %s | %d `%s` | %s | %s | %s |\n", c.Kind(), fmtPct(c.ChangePct), c.Unit, c.Benchmark, mdCell(c.Levels()),
			c.Run.Index+1, c.Run.ID, c.PText(), mdCell(c.FoundBy()), mdCell(c.EventText()))
	}
	for i, c := range r.Changes {
		if i == MarkdownDetails {
			ew.Printf("\n%d more changes: the runs around them are in `vllmperf history check --format json`.\n", len(r.Changes)-i)
			break
		}
		ew.Printf("\n<details><summary>Runs around the change of %s in %s (%s)</summary>\n\n", c.Unit, c.Benchmark, fmtPct(c.ChangePct))
		ew.Printf("| run | id | date | commit | image | vLLM | %s |\n|--:|---|---|---|---|---|--:|\n", c.Unit)
		for _, a := range c.Around {
			mark := ""
			if a.Index == c.Run.Index {
				mark = " ← change"
			}
			ew.Printf("| %d | `%s` | %s | `%s` | `%s` | %s | %s%s |\n", a.Index+1, a.ID, a.Date.Format(time.DateTime), shortCommit(a.Commit),
				a.Image, a.VLLMVersion, fmtValue(c.Unit, a.Value), mark)
		}
		if br := c.BisectRange(); c.Regression && br != "" {
			ew.Printf("\nTo find the build: %s.\n", mdCell(br))
		}
		ew.Printf("\n</details>\n")
	}
	return ew.Err
}

// Kind is REGRESSION or IMPROVEMENT.
func (c Change) Kind() string {
	if c.Regression {
		return verdict.Regression
	}
	return verdict.Improvement
}

// Levels is "19.95ms → 20.79ms (8 | 8 runs)".
func (c Change) Levels() string {
	return fmt.Sprintf("%s → %s (%d | %d runs)", fmtValue(c.Unit, c.Before), fmtValue(c.Unit, c.After), c.BeforeRuns, c.AfterRuns)
}

// FoundBy says which series found the change: "its series", "the
// profile's series" for a profile series' own, or "its profile's change"
// for a benchmark tested at its profile's change point.
func (c Change) FoundBy() string {
	switch {
	case c.Via != "":
		return "its profile's change"
	case len(c.Members) > 0:
		return "the profile's series"
	}
	return "its series"
}

// EventText lists the known events near the change, "" for none.
func (c Change) EventText() string {
	var parts []string
	for _, e := range c.Events {
		parts = append(parts, fmt.Sprintf("run %d: %s", e.Run+1, e.Text))
	}
	return strings.Join(parts, "; ")
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// fmtValue and fmtPct are the gate's: a history reads like a gate's table.
var (
	fmtValue = gate.FormatValue
	fmtPct   = gate.FormatDelta
)

// FormatP writes a change point's p-value. Permutation tests reach p far
// below the gate's (1/(permutations+1)), so it keeps four significant
// digits where the gate's FormatP keeps three decimals.
func FormatP(p float64) string { return strconv.FormatFloat(p, 'g', 4, 64) }

// plainPct writes a fraction as a percentage without a sign: 0.05 → 5%.
func plainPct(f float64) string { return strconv.FormatFloat(100*f, 'f', -1, 64) + "%" }

// fmtConfidence is 1 − p in percent, to the precision p has.
func fmtConfidence(p float64) string {
	return fmt.Sprintf("%.2f%%", 100*(1-p))
}

type jsonReport struct {
	Outcome    verdict.Outcome `json:"outcome"`
	Headline   string          `json:"headline"`
	Store      string          `json:"store,omitempty"`
	Thresholds string          `json:"thresholds,omitempty"`
	Method     struct {
		Alpha        float64 `json:"alpha"`
		MinChange    float64 `json:"min_change"`
		MinSize      int     `json:"min_size"`
		Permutations int     `json:"permutations"`
		Seed         uint64  `json:"seed"`
		Tested       int     `json:"series_tested"`
		Cutoff       float64 `json:"p_cutoff"`
		FirstStep    float64 `json:"p_first_step"`
	} `json:"method"`
	Keys    []jsonKey    `json:"keys"`
	Changes []jsonChange `json:"changes"`
}

type jsonKey struct {
	Key      string      `json:"key"`
	Runs     int         `json:"runs"`
	First    RunRef      `json:"first"`
	Last     RunRef      `json:"last"`
	Tested   int         `json:"series_tested"`
	Profiles int         `json:"series_of_profiles"`
	Constant int         `json:"series_constant"`
	Short    int         `json:"series_short"`
	NotGated int         `json:"series_not_gated"`
	Events   []jsonEvent `json:"events"`
}

type jsonEvent struct {
	Run   int    `json:"run"`
	RunID string `json:"run_id"`
	Kind  string `json:"kind"`
	Text  string `json:"text"`
}

type jsonChange struct {
	Kind       string      `json:"kind"`
	Key        string      `json:"key"`
	Benchmark  string      `json:"benchmark"`
	Unit       string      `json:"unit"`
	Better     string      `json:"better"`
	Run        RunRef      `json:"run"`
	Before     float64     `json:"before"`
	After      float64     `json:"after"`
	BeforeRuns int         `json:"before_runs"`
	AfterRuns  int         `json:"after_runs"`
	ChangePct  *float64    `json:"change_pct"`
	P          float64     `json:"p"`
	Confidence float64     `json:"confidence"`
	Perms      int         `json:"permutations"`
	PBound     bool        `json:"p_is_bound"`
	FoundBy    string      `json:"found_by"`
	Via        string      `json:"via,omitempty"`
	Members    []string    `json:"members,omitempty"`
	Events     []jsonEvent `json:"events"`
	Around     []jsonRun   `json:"around"`
}

type jsonRun struct {
	Run         int       `json:"run"`
	ID          string    `json:"id"`
	Date        time.Time `json:"date"`
	Commit      string    `json:"commit"`
	Image       string    `json:"image,omitempty"`
	VLLMVersion string    `json:"vllm_version,omitempty"`
	Value       *float64  `json:"value"`
	After       bool      `json:"after"`
}

func jsonEvents(es []Event) []jsonEvent {
	out := []jsonEvent{}
	for _, e := range es {
		out = append(out, jsonEvent{Run: e.Run + 1, RunID: e.RunID, Kind: e.Kind, Text: e.Text})
	}
	return out
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// WriteJSON writes the report as JSON; run numbers count from 1, as the
// other formats print them (RunRef.Index counts from 0).
func (r *CheckReport) WriteJSON(w io.Writer) error {
	j := jsonReport{Outcome: r.Outcome(), Headline: r.Headline(), Store: r.Store, Thresholds: r.Thresholds, Keys: []jsonKey{}, Changes: []jsonChange{}}
	o := r.Options
	j.Method.Alpha, j.Method.MinChange, j.Method.MinSize, j.Method.Permutations, j.Method.Seed = o.Alpha, o.MinChange, o.MinSize, o.Permutations, o.Seed
	j.Method.Tested, j.Method.Cutoff, j.Method.FirstStep = r.Tested, r.Cutoff, r.FirstStep
	for _, k := range r.Keys {
		j.Keys = append(j.Keys, jsonKey{Key: k.Key, Runs: k.Runs, First: k.First, Last: k.Last, Tested: k.Tested, Profiles: k.Profiles, Constant: k.Constant,
			Short: k.Short, NotGated: k.NotGated, Events: jsonEvents(k.Events)})
	}
	for _, c := range r.Changes {
		jc := jsonChange{Kind: c.Kind(), Key: c.Key, Benchmark: c.Benchmark, Unit: c.Unit, Better: c.Direction.String(), Run: c.Run,
			Before: c.Before, After: c.After, BeforeRuns: c.BeforeRuns, AfterRuns: c.AfterRuns, ChangePct: finite(c.ChangePct),
			P: c.P, Confidence: c.Confidence(), Perms: c.Permutations, PBound: c.PBound, FoundBy: c.FoundBy(), Via: c.Via, Members: c.Members, Events: jsonEvents(c.Events), Around: []jsonRun{}}
		for _, a := range c.Around {
			jc.Around = append(jc.Around, jsonRun{Run: a.Index + 1, ID: a.ID, Date: a.Date, Commit: a.Commit, Image: a.Image,
				VLLMVersion: a.VLLMVersion, Value: finite(a.Value), After: a.After})
		}
		j.Changes = append(j.Changes, jc)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}

func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;").Replace(s)
}
