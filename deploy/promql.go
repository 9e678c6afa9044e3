package deploy

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
)

// Renames maps each vLLM metric that was renamed (by its current base name,
// without _total or the histogram suffixes) to the name vLLM exposed before:
// deprecated in X.Y, hidden in X.Y+1 unless --show-hidden-metrics-for-version,
// removed in X.Y+2. It is package scrape's rename table (the one the suite's
// scraper reads) written as PromQL names.
var Renames = renames()

func renames() map[string]string {
	out := map[string]string{}
	for old, current := range serverfamily.VLLM.Renames() {
		out[serverfamily.VLLM.Metrics.Prefix+baseName(current)] = serverfamily.VLLM.Metrics.Prefix + baseName(old)
	}
	return out
}

// Removed lists metrics of vLLM's V0 engine that no V1 server exposes (vLLM's
// own example dashboard still reads some of them): an expression on them is
// always empty. It is package scrape's list.
var Removed = removed()

func removed() []string {
	var out []string
	for _, name := range serverfamily.VLLM.RemovedNames() {
		out = append(out, serverfamily.VLLM.Metrics.Prefix+name)
	}
	return out
}

// ParseExpr parses a PromQL expression with the grammar of Prometheus 2.42,
// the version Debian ships and the tests run.
func ParseExpr(expr string) (parser.Expr, error) {
	return parser.ParseExpr(expr)
}

// Selectors returns the instant and range-vector selectors of expr as
// PromQL text (a range selector without its range), in order, each once.
func Selectors(expr parser.Expr) []string {
	var out []string
	seen := map[string]bool{}
	parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			s := vs.String()
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
		return nil
	})
	return out
}

// MetricNames returns the metric names expr selects, sorted, each once.
func MetricNames(expr parser.Expr) []string {
	seen := map[string]bool{}
	parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok && vs.Name != "" {
			seen[vs.Name] = true
		}
		return nil
	})
	out := make([]string, 0, len(seen))
	for name := range seen {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// baseName strips the suffixes a counter or histogram adds to its name.
func baseName(name string) string {
	for _, suffix := range []string{"_total", "_bucket", "_count", "_sum"} {
		if b, ok := strings.CutSuffix(name, suffix); ok {
			return b
		}
	}
	return name
}

// CheckNames applies the renames rule to one expression: a metric vLLM
// renamed is read under both names (the current `or` the old one, so the
// expression works on every version from 0.9), no removed V0 metric is
// read, and every vLLM name read is one package scrape knows. It returns one error per violation.
func CheckNames(expr parser.Expr) []error {
	names := MetricNames(expr)
	bases := map[string]bool{}
	for _, n := range names {
		bases[baseName(n)] = true
	}
	var errs []error
	for current, old := range Renames {
		switch {
		case bases[current] && !bases[old]:
			errs = append(errs, fmt.Errorf("reads %s but not its pre-rename name %s: add `or` with the old name (vLLM before the rename exposes only that)", current, old))
		case bases[old] && !bases[current]:
			errs = append(errs, fmt.Errorf("reads %s, which vLLM renamed to %s: read the current name `or` the old one", old, current))
		}
	}
	for _, n := range names {
		if strings.HasPrefix(n, serverfamily.VLLM.Metrics.Prefix) && !scrape.Known(n) {
			errs = append(errs, fmt.Errorf("reads %s, a name vLLM does not expose (package scrape does not know it): misspelt?", n))
		}
		for _, gone := range Removed {
			if n == gone {
				errs = append(errs, fmt.Errorf("reads %s, a V0-engine metric no V1 server exposes: drop it", n))
			}
		}
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errs
}

// grafanaVar matches Grafana's $name and ${name} variable references, and
// the forms this package does not expand (${name:format}, [[name]]) so that
// they can be reported.
var grafanaVar = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)(:[^}]*)?\}|\$([A-Za-z0-9_]+)|\[\[([A-Za-z0-9_]+)\]\]`)

// ExpandVariables replaces Grafana variable references in a dashboard query
// ($name, ${name}) with their values from vars, Grafana's built-ins such as
// __rate_interval included. A variable missing from vars, or a form it does
// not expand (${name:format}, the deprecated [[name]]), is an error naming it.
func ExpandVariables(query string, vars map[string]string) (string, error) {
	var errs []string
	out := grafanaVar.ReplaceAllStringFunc(query, func(m string) string {
		sub := grafanaVar.FindStringSubmatch(m)
		name := sub[1] + sub[3]
		switch {
		case sub[4] != "":
			errs = append(errs, fmt.Sprintf("[[%s]] is Grafana's deprecated syntax: write $%s", sub[4], sub[4]))
			return m
		case sub[2] != "":
			errs = append(errs, fmt.Sprintf("${%s%s}: formatted variables are not supported here: write $%s", name, sub[2], name))
			return m
		}
		v, ok := vars[name]
		if !ok {
			errs = append(errs, fmt.Sprintf("unknown variable $%s: define it in the dashboard's templating and give the test a value for it", name))
			return m
		}
		return v
	})
	if len(errs) > 0 {
		return "", fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return out, nil
}
