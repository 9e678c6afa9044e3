package deploy_test

// Static checks of the shipped files: no Prometheus needed.

import (
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/vllmperf/vllmperf/deploy"
)

// TestDashboardQueriesParse: every panel query is valid PromQL once its
// variables are expanded, and reads renamed metrics under both names.
func TestDashboardQueriesParse(t *testing.T) {
	t.Parallel()
	d := shippedDashboard(t)
	queries := d.Queries()
	if len(queries) == 0 {
		t.Fatal("the dashboard has no queries")
	}
	for _, q := range queries {
		expr, err := deploy.ExpandVariables(q.Expr, staticVars)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		e, err := deploy.ParseExpr(expr)
		if err != nil {
			t.Errorf("%s: %v\n%s", q, err, expr)
			continue
		}
		for _, err := range deploy.CheckNames(e) {
			t.Errorf("%s: %v", q, err)
		}
	}
}

// TestDashboardQueriesFilter: every series a panel reads is filtered by the
// model_name and instance variables, so that the selectors at the top of
// the dashboard apply to every panel.
func TestDashboardQueriesFilter(t *testing.T) {
	t.Parallel()
	const model, instance = "MODEL_SENTINEL", "INSTANCE_SENTINEL"
	vars := map[string]string{"model_name": model, "instance": instance, "__rate_interval": "1m"}
	for _, q := range shippedDashboard(t).Queries() {
		expr, err := deploy.ExpandVariables(q.Expr, vars)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		e, err := deploy.ParseExpr(expr)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
			vs, ok := n.(*parser.VectorSelector)
			if !ok {
				return nil
			}
			for label, want := range map[string]string{"model_name": model, "instance": instance} {
				if !slices.ContainsFunc(vs.LabelMatchers, func(m *labels.Matcher) bool {
					return m.Name == label && m.Type == labels.MatchRegexp && m.Value == want
				}) {
					t.Errorf("%s: selector %s lacks %s=~\"$%s\"", q, vs, label, label)
				}
			}
			return nil
		})
	}
}

// TestDashboardTemplating: the data source is a variable (the dashboard
// imports into any Grafana), and model_name and instance select from the
// series vLLM exposes.
func TestDashboardTemplating(t *testing.T) {
	t.Parallel()
	d := shippedDashboard(t)
	vars := map[string]deploy.Variable{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v
	}
	ds, ok := vars["datasource"]
	if !ok || ds.Type != "datasource" || string(ds.Query) != `"prometheus"` {
		t.Errorf("want a variable datasource of type datasource querying prometheus, got %+v", ds)
	}
	for _, name := range []string{"model_name", "instance"} {
		v, ok := vars[name]
		if !ok {
			t.Errorf("no variable %s", name)
			continue
		}
		if v.Datasource == nil || v.Datasource.UID != "${datasource}" {
			t.Errorf("variable %s: data source %+v, want uid ${datasource}", name, v.Datasource)
		}
		if !v.IncludeAll || v.AllValue != ".*" {
			t.Errorf("variable %s: want includeAll with allValue .* (the queries match it with =~), got %v %q", name, v.IncludeAll, v.AllValue)
		}
		sel, label, err := v.VariableSelector()
		if err != nil {
			t.Error(err)
			continue
		}
		if label != name {
			t.Errorf("variable %s lists label %s", name, label)
		}
		expr, err := deploy.ExpandVariables(sel, staticVars)
		if err != nil {
			t.Errorf("variable %s: %v", name, err)
			continue
		}
		e, err := deploy.ParseExpr(expr)
		if err != nil {
			t.Errorf("variable %s: %v", name, err)
			continue
		}
		for _, err := range deploy.CheckNames(e) {
			t.Errorf("variable %s: %v", name, err)
		}
	}
	ids := map[int]bool{}
	for _, p := range d.AllPanels() {
		if ids[p.ID] {
			t.Errorf("panel %q: id %d used twice", p.Title, p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q: data source %+v, want uid ${datasource}", p.Title, p.Datasource)
		}
		for _, tg := range p.Targets {
			if tg.Datasource == nil || tg.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q query %s: data source %+v, want uid ${datasource}", p.Title, tg.RefID, tg.Datasource)
			}
		}
	}
}

// TestRuleExpressions: every rule parses, reads renamed metrics under both
// names, and reads only series that vLLM, Prometheus (up) or another rule
// produces: a misspelt recorded name would leave an alert silent forever.
func TestRuleExpressions(t *testing.T) {
	t.Parallel()
	files := shippedRules(t)
	recorded := map[string]bool{}
	for _, f := range files {
		for _, r := range f.Rules() {
			if r.Record != "" {
				if recorded[r.Record] {
					t.Errorf("%s: recorded twice", r.Where(f.Path))
				}
				recorded[r.Record] = true
			}
		}
	}
	for _, f := range files {
		for _, r := range f.Rules() {
			e, err := deploy.ParseExpr(r.Expr)
			if err != nil {
				t.Errorf("%s: %v", r.Where(f.Path), err)
				continue
			}
			for _, err := range deploy.CheckNames(e) {
				t.Errorf("%s: %v", r.Where(f.Path), err)
			}
			for _, name := range deploy.MetricNames(e) {
				if !strings.HasPrefix(name, "vllm:") && name != "up" && !recorded[name] {
					t.Errorf("%s: reads %s, which no rule records and vLLM does not expose", r.Where(f.Path), name)
				}
			}
		}
	}
}

// TestAlertsDocumented: every alert waits (for:), has a severity and says
// what happened and what to do.
func TestAlertsDocumented(t *testing.T) {
	t.Parallel()
	for _, f := range shippedRules(t) {
		for _, r := range f.Rules() {
			if r.Alert == "" {
				continue
			}
			if r.For == "" {
				t.Errorf("%s: no for: (a single evaluation would page)", r.Where(f.Path))
			}
			if s := r.Labels["severity"]; s != "warning" && s != "critical" {
				t.Errorf("%s: severity %q, want warning or critical", r.Where(f.Path), s)
			}
			for _, a := range []string{"summary", "description"} {
				if strings.TrimSpace(r.Annotations[a]) == "" {
					t.Errorf("%s: no %s annotation", r.Where(f.Path), a)
				}
			}
		}
	}
}

// TestEveryRuleUnitTested: the promtool tests cover every alert both firing
// and staying quiet, and read every recorded series at least once.
func TestEveryRuleUnitTested(t *testing.T) {
	t.Parallel()
	fires, quiet, read := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, path := range glob(t, promtoolTests) {
		for _, tc := range loadPromtoolTests(t, path).Tests {
			for _, a := range tc.AlertRuleTests {
				if len(a.ExpAlerts) > 0 {
					fires[a.Alertname] = true
				} else {
					quiet[a.Alertname] = true
				}
			}
			for _, p := range tc.PromQLExprTests {
				e, err := deploy.ParseExpr(p.Expr)
				if err != nil {
					t.Errorf("%s: test %q: %v", path, tc.Name, err)
					continue
				}
				for _, name := range deploy.MetricNames(e) {
					read[name] = true
				}
			}
		}
	}
	for _, f := range shippedRules(t) {
		for _, r := range f.Rules() {
			switch {
			case r.Alert != "" && !fires[r.Alert]:
				t.Errorf("%s: no promtool test where it fires", r.Where(f.Path))
			case r.Alert != "" && !quiet[r.Alert]:
				t.Errorf("%s: no promtool test where it stays quiet", r.Where(f.Path))
			case r.Record != "" && !read[r.Record] && !strings.HasPrefix(r.Record, "slo:"):
				// SLO records are read by the alerts' tests (their values
				// appear in the expected annotations).
				t.Errorf("%s: no promql_expr_test reads it", r.Where(f.Path))
			}
		}
	}
}

// TestSLOs: each SLO is one number, where the README says it is.
func TestSLOs(t *testing.T) {
	t.Parallel()
	files := shippedRules(t)
	for _, tc := range []struct {
		record   string
		min, max float64
	}{
		// A P99 TTFT target in seconds.
		{sloTTFTRecord, 0.01, 60},
		// A share of requests.
		{sloFailuresRecord, 0, 1},
	} {
		if v := sloValue(t, files, tc.record); v <= tc.min || v >= tc.max {
			t.Errorf("%s = %v, want in (%v, %v)", tc.record, v, tc.min, tc.max)
		}
	}
}
