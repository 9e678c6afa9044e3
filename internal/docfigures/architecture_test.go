package docfigures

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// archDoc is the page the figures below are kept in.
const archDoc = "docs/architecture.md"

// An archArea is a set of folders of the module, what they hold, and the
// areas its packages may import. The table below is the one home of the
// import rules: docs/architecture.md's diagram and table are generated from
// it, and TestFiguresArchitecture checks every import against it.
type archArea struct {
	name string
	// dirs are the area's folders, from the module root; a package belongs
	// to the area whose folder is its path's longest prefix ("." is the
	// module root's package alone).
	dirs  []string
	holds string
	// may lists the areas its packages may import, besides its own and
	// the shared ones; anyArea lets it import every area (the commands).
	may     []string
	anyArea bool
	// shared marks an area every other may import (leaves of no area's
	// logic: small helpers, embedded files).
	shared bool
	// drawn areas are the diagram's boxes.
	drawn bool
}

// archAreas are the module's areas, in the diagram's order.
var archAreas = []archArea{
	{name: "cmd", dirs: []string{"cmd"}, anyArea: true, drawn: true,
		holds: "the commands: `vllmperf` (its command-only packages under cmd/vllmperf/internal) and `vllm-sim`"},
	{name: "orchestrate", dirs: []string{"internal/orchestrate"}, drawn: true,
		may:   []string{"results", "gate", "run", "target", "request", "vocab", "simulator", "fixtures"},
		holds: "many runs: the suite's sessions, the capacity search, a sweep's knee, GPU sets, make perf-gate, the upgrade gate, bisect, predict, parity; record turns runs into results records"},
	{name: "results", dirs: []string{"internal/results"}, drawn: true,
		may:   []string{"gate", "run", "target", "request", "vocab"},
		holds: "the results folder (write and read it) and its readers: report, diagnose, history (and its change points), merge"},
	{name: "gate", dirs: []string{"internal/gate"}, drawn: true,
		may:   []string{"run", "target", "request", "vocab"},
		holds: "benchmark files against a baseline: the statistics, the limits, the runner control, gate quality, sequential counts"},
	{name: "run", dirs: []string{"internal/run"}, drawn: true,
		may:   []string{"target", "request", "vocab", "fixtures"},
		holds: "one run of a point: the pipeline that wires the stages, its result (run/result), scenario points, samples, statistics, the checks, vLLM's output formats"},
	{name: "target", dirs: []string{"internal/target", "internal/thirdparty"}, drawn: true,
		may:   []string{"request", "vocab", "simulator"},
		holds: "what a run measures: profiles, the server starter (simulator, container, external), server families, /metrics, GPU telemetry, the torch profiler; thirdparty: llm-d's simulator as a server"},
	{name: "request", dirs: []string{"internal/request"}, drawn: true,
		may:   []string{"vocab"},
		holds: "what a run sends: the OpenAI client, workloads and data sets, the load generator, the overload rule, JSON schemas, the gateway transport"},
	{name: "simulator", dirs: []string{"internal/vllmsim"}, drawn: true,
		holds: "vllm-sim: the simulated engine, its HTTP API and /metrics, its calibration data; it imports no other area (internal/vllmsim's TestSimulatorStandsAlone checks its whole dependency set)"},
	{name: "vocab", dirs: []string{"internal/vocab"}, drawn: true,
		holds: "the shared words: bench units and names, verdicts, thresholds, VLLMPERF_ variables, exit statuses, vLLM's date layout; it imports no other area"},
	{name: "calreplay", dirs: []string{"internal/calreplay"},
		may:   []string{"run", "target", "request", "vocab", "simulator"},
		holds: "make calibrate: the calibration rows replayed against the simulator"},
	{name: "fixtures", dirs: []string{"fixtures"},
		may:   []string{"request"},
		holds: "prompts and recorded expositions, embedded"},
	{name: "deploy", dirs: []string{"deploy"},
		may:   []string{"target"},
		holds: "Prometheus rules and the Grafana dashboard, checked against scrape's names"},
	{name: "support", dirs: []string{"internal/docfigures", "internal/filelock", "internal/outfile", "internal/progress", "internal/simtest", "internal/strictyaml", "internal/suggest", "internal/testphase"}, shared: true,
		holds: "small helpers any area may use: doc figures, file locks, atomic output files, the progress line, simulator test helpers, strict YAML, suggestions, test phases"},
	{name: "files", dirs: []string{".", "build", "scenarios"}, shared: true,
		holds: "embedded files: thresholds.yaml (the module root's package), the simulator's Dockerfile, the profiles and scenarios"},
}

// An archException is one import the areas' rules would refuse, allowed
// by name until its package moves.
type archException struct {
	from string // the importer's folder prefix ("" any package)
	to   string // the package imported, from the module root
	why  string
}

// archExceptions are the imports allowed across the rules, each a leaf
// that imports nothing of the area above its importer.
var archExceptions = []archException{
	{"internal/request", "internal/run/sample", "a request's record, which the client and the load generator fill"},
	{"internal/request", "internal/target/serverfamily", "a family's request extras, read by the client"},
	{"", "internal/vllmsim/simpace", "the simulator's pace series names (a leaf importing nothing), which the scrape names and the sim_real_time check read"},
	{"internal/progress", "internal/request/load", "vllmperf run's progress line counts a load's requests"},
}

// archRegenerate is the one command that rewrites the page's figures.
const archRegenerate = "VLLMPERF_UPDATE_FIGURES=1 go test -count=1 -run '^TestFiguresArchitecture$' ./internal/docfigures/"

// TestFiguresArchitecture keeps docs/architecture.md true: its diagram and
// area table are generated from archAreas, its folder tree from go list
// (a package the page lists that does not exist, or one it misses, is
// named), and every import of every package follows the areas' rules.
func TestFiguresArchitecture(t *testing.T) {
	t.Parallel()
	root := ModuleRoot(t)
	pkgs := listPackages(t, root)
	paths := make([]string, 0, len(pkgs))
	for p := range pkgs {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	checkAreas(t, paths)
	checkImports(t, paths, pkgs)
	checkListedTree(t, root, paths)
	Sync(t, archDoc, "architecture-diagram", archDiagram())
	Sync(t, archDoc, "architecture-areas", archTable())
	Sync(t, archDoc, "architecture-tree", archTree(paths))
}

// checkAreas fails for every package in no area.
func checkAreas(t *testing.T, paths []string) {
	t.Helper()
	for _, p := range paths {
		if archAreaOf(p) == nil {
			t.Errorf("package %s is in no area: add its folder to an area's dirs in internal/docfigures/architecture_test.go (archAreas)", p)
		}
	}
}

// listPackages runs go list over the module: each package's folder from
// the module root ("." the root) and the module's packages it imports
// (non-test files).
func listPackages(t *testing.T, root string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		var imports []string
		for _, imp := range fields[1:] {
			if rel, ok := relPath(imp); ok {
				imports = append(imports, rel)
			}
		}
		rel, ok := relPath(fields[0])
		if !ok {
			t.Fatalf("go list: %s is not in module %s", fields[0], modulePath)
		}
		pkgs[rel] = imports
	}
	return pkgs
}

// relPath is an import path of the module as a folder from its root.
func relPath(importPath string) (string, bool) {
	if importPath == modulePath {
		return ".", true
	}
	rel, ok := strings.CutPrefix(importPath, modulePath+"/")
	return rel, ok
}

// archAreaOf is the area of the package at folder p, nil when none.
func archAreaOf(p string) *archArea {
	var best *archArea
	bestLen := -1
	for i := range archAreas {
		for _, d := range archAreas[i].dirs {
			match := p == d || (d != "." && strings.HasPrefix(p, d+"/"))
			if match && len(d) > bestLen {
				best, bestLen = &archAreas[i], len(d)
			}
		}
	}
	return best
}

// allows reports whether area a may import area b.
func (a *archArea) allows(b *archArea) bool {
	return a == b || a.anyArea || b.shared || slices.Contains(a.may, b.name)
}

// excepted is the exception that lets from import to, nil when none does.
func excepted(from, to string) *archException {
	for i, e := range archExceptions {
		if e.to == to && (e.from == "" || from == e.from || strings.HasPrefix(from, e.from+"/")) {
			return &archExceptions[i]
		}
	}
	return nil
}

// checkImports fails for every import its areas' rules refuse, and for an
// exception no import uses any more.
func checkImports(t *testing.T, paths []string, pkgs map[string][]string) {
	t.Helper()
	used := map[*archException]bool{}
	for _, p := range paths {
		a := archAreaOf(p)
		for _, imp := range pkgs[p] {
			b := archAreaOf(imp)
			if a == nil || b == nil || a.allows(b) {
				continue
			}
			if e := excepted(p, imp); e != nil {
				used[e] = true
				continue
			}
			t.Errorf("%s (area %s) imports %s (area %s): %s may import only %s; move the name it needs down, or change the rule in archAreas (and say why in docs/architecture.md)",
				p, a.name, imp, b.name, a.name, a.mayText())
		}
	}
	for i := range archExceptions {
		if e := &archExceptions[i]; !used[e] {
			t.Errorf("exception %s -> %s is used by no import any more: remove it from archExceptions", e.importerText(), e.to)
		}
	}
}

// mayText lists what a may import, for messages and the table.
func (a *archArea) mayText() string {
	if a.anyArea {
		return "every area"
	}
	var names []string
	for _, b := range archAreas {
		if slices.Contains(a.may, b.name) {
			names = append(names, b.name)
		}
	}
	return strings.Join(append(names, "the shared areas (support, files)"), ", ")
}

// importerText names an exception's importers.
func (e archException) importerText() string {
	if e.from == "" {
		return "any package"
	}
	return "`" + e.from + "`"
}

// drawnAreas are the diagram's boxes, in archAreas' order.
func drawnAreas() []*archArea {
	var out []*archArea
	for i := range archAreas {
		if archAreas[i].drawn {
			out = append(out, &archAreas[i])
		}
	}
	return out
}

// arrow reports whether the diagram may draw a to b: a may import b, an
// area of its own.
func arrow(a, b *archArea) bool { return a != b && a.allows(b) && !b.shared }

// reaches reports whether a path of arrows through areas leads from a to
// b, avoiding those seen.
func reaches(areas []*archArea, a, b *archArea, seen map[*archArea]bool) bool {
	for _, c := range areas {
		if !seen[c] && arrow(a, c) {
			seen[c] = true
			if c == b || reaches(areas, c, b, seen) {
				return true
			}
		}
	}
	return false
}

// implied reports whether the arrow from a to b is implied by a longer
// path, through another area a may import.
func implied(areas []*archArea, a, b *archArea) bool {
	for _, c := range areas {
		if c != b && arrow(a, c) && reaches(areas, c, b, map[*archArea]bool{c: true}) {
			return true
		}
	}
	return false
}

// archDiagram is the Mermaid flowchart of the drawn areas: an arrow from
// A to B says A may import B, drawn only when no longer path says so.
func archDiagram() string {
	areas := drawnAreas()
	var sb strings.Builder
	sb.WriteString("\n```mermaid\nflowchart TD\n")
	for _, a := range areas {
		fmt.Fprintf(&sb, "  %s[\"%s<br/>%s/\"]\n", a.name, a.name, strings.Join(a.dirs, "/, "))
	}
	for _, a := range areas {
		for _, b := range areas {
			if arrow(a, b) && !implied(areas, a, b) {
				fmt.Fprintf(&sb, "  %s --> %s\n", a.name, b.name)
			}
		}
	}
	sb.WriteString("```\n")
	return sb.String()
}

// archTable is the areas' table (folders, what they hold, what they may
// import) and the exceptions.
func archTable() string {
	var sb strings.Builder
	sb.WriteString("\n| area | folders | holds | may import |\n| --- | --- | --- | --- |\n")
	for i := range archAreas {
		a := &archAreas[i]
		may := a.mayText()
		if a.shared {
			may = "the shared areas only; every area may import it"
		}
		dirs := make([]string, len(a.dirs))
		for j, d := range a.dirs {
			dirs[j] = "`" + d + "`"
		}
		fmt.Fprintf(&sb, "| **%s** | %s | %s | %s |\n", a.name, strings.Join(dirs, " "), a.holds, may)
	}
	sb.WriteString("\nAllowed across the rules, by name, until the package moves:\n\n")
	for _, e := range archExceptions {
		fmt.Fprintf(&sb, "- %s may import `%s`: %s.\n", e.importerText(), e.to, e.why)
	}
	sb.WriteString("\n")
	return sb.String()
}

// treeIndent is one level of the tree's indentation.
const treeIndent = 4

// archTree draws the module's folders that hold packages: a name with a
// trailing slash is a folder that is no package itself.
func archTree(paths []string) string {
	isPkg := map[string]bool{}
	dirs := map[string]bool{}
	for _, p := range paths {
		isPkg[p] = true
		if p == "." {
			continue
		}
		parts := strings.Split(p, "/")
		for i := range parts {
			dirs[strings.Join(parts[:i+1], "/")] = true
		}
	}
	children := map[string][]string{}
	for d := range dirs {
		parent := "."
		if i := strings.LastIndex(d, "/"); i >= 0 {
			parent = d[:i]
		}
		children[parent] = append(children[parent], d)
	}
	var sb strings.Builder
	sb.WriteString("\n```text\n. (module root)\n")
	var walk func(dir, prefix string)
	walk = func(dir, prefix string) {
		kids := children[dir]
		slices.Sort(kids)
		for i, k := range kids {
			branch, next := "├── ", "│   "
			if i == len(kids)-1 {
				branch, next = "└── ", "    "
			}
			name := k[strings.LastIndex(k, "/")+1:]
			if !isPkg[k] {
				name += "/"
			}
			sb.WriteString(prefix + branch + name + "\n")
			walk(k, prefix+next)
		}
	}
	walk(".", "")
	sb.WriteString("```\n")
	return sb.String()
}

// checkListedTree compares the packages the committed tree lists with go
// list's, by name: the rewrite fixes them, but the message says which.
func checkListedTree(t *testing.T, root string, paths []string) {
	t.Helper()
	data, err := os.ReadFile(root + "/" + archDoc)
	if err != nil {
		t.Fatal(err)
	}
	listed, err := treePackages(string(data))
	if err != nil {
		t.Fatalf("%s: %v", archDoc, err)
	}
	var missing, extra []string
	for _, p := range paths {
		if !listed[p] {
			missing = append(missing, p)
		}
	}
	for p := range listed {
		if !slices.Contains(paths, p) {
			extra = append(extra, p)
		}
	}
	slices.Sort(extra)
	if len(missing)+len(extra) > 0 && os.Getenv(EnvUpdate) != "1" {
		t.Errorf("%s: the tree misses packages %v and lists packages that do not exist %v; rewrite it with: %s", archDoc, missing, extra, archRegenerate)
	}
}

// treePackages reads the packages a tree drawn by archTree lists.
func treePackages(doc string) (map[string]bool, error) {
	begin, end := Markers("architecture-tree")
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		return nil, fmt.Errorf("no %q … %q", begin, end)
	}
	out := map[string]bool{}
	var stack []string
	for _, line := range strings.Split(doc[i+len(begin):j], "\n") {
		if line == ". (module root)" {
			out["."] = true
			continue
		}
		k := strings.IndexFunc(line, func(r rune) bool { return !strings.ContainsRune("│├└─  ", r) })
		if k < 0 || strings.HasPrefix(line, "```") {
			continue
		}
		depth := len([]rune(line[:k])) / treeIndent
		if depth < 1 || depth-1 > len(stack) {
			return nil, fmt.Errorf("tree line %q: its indentation skips a level", line)
		}
		name := line[k:]
		stack = append(stack[:depth-1], strings.TrimSuffix(name, "/"))
		if !strings.HasSuffix(name, "/") {
			out[strings.Join(stack, "/")] = true
		}
	}
	return out, nil
}
