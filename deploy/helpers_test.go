package deploy_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/vllmperf/vllmperf/deploy"
)

// The shipped files, relative to this package.
const (
	promConfigPath = "prometheus/prometheus.yml"
	rulesGlob      = "prometheus/rules/*.rules.yml"
	promtoolTests  = "prometheus/tests/*.yml"
	dashboardPath  = "grafana/vllm-dashboard.json"
)

// Records of the SLO group of the alert rules.
const (
	sloTTFTRecord     = "slo:vllm_time_to_first_token_seconds:p99"
	sloFailuresRecord = "slo:vllm_request_failures:ratio"
)

// staticVars are dashboard variable values that turn every panel query into
// plain PromQL over all models and instances.
var staticVars = map[string]string{"model_name": ".*", "instance": ".*", "__rate_interval": "1m"}

// requireTool returns the path of a program the test needs. Without it the
// test is skipped, or fails when CI=true (CI installs it: .ci/run).
func requireTool(t *testing.T, name, install string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	msg := fmt.Sprintf("%s not found on PATH: %s", name, install)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " (CI=true: a missing tool is a failure)")
	}
	t.Skip(msg + " (skipped; CI=true makes this a failure)")
	return ""
}

// glob returns the files matching pattern, sorted; none is a failure.
func glob(t *testing.T, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no file matches %s (err %v)", pattern, err)
	}
	sort.Strings(files)
	return files
}

// shippedRules loads every shipped rule file.
func shippedRules(t *testing.T) []*deploy.RuleFile {
	t.Helper()
	var out []*deploy.RuleFile
	for _, path := range glob(t, rulesGlob) {
		f, err := deploy.LoadRules(path)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// shippedDashboard loads the shipped dashboard.
func shippedDashboard(t *testing.T) *deploy.Dashboard {
	t.Helper()
	d, err := deploy.LoadDashboard(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// sloValue returns the number an SLO record's vector(N) holds.
func sloValue(t *testing.T, files []*deploy.RuleFile, record string) float64 {
	t.Helper()
	for _, f := range files {
		for _, r := range f.Rules() {
			if r.Record != record {
				continue
			}
			var v float64
			if _, err := fmt.Sscanf(r.Expr, "vector(%g)", &v); err != nil {
				t.Fatalf("%s: want vector(<number>), got %q", r.Where(f.Path), r.Expr)
			}
			return v
		}
	}
	t.Fatalf("no rule records %s", record)
	return 0
}

// promtoolTestFile is the format of `promtool test rules` files (Prometheus
// 2.42), read strictly.
type promtoolTestFile struct {
	RuleFiles          []string `yaml:"rule_files"`
	EvaluationInterval string   `yaml:"evaluation_interval"`
	GroupEvalOrder     []string `yaml:"group_eval_order"`
	Tests              []struct {
		Name           string            `yaml:"name"`
		Interval       string            `yaml:"interval"`
		ExternalLabels map[string]string `yaml:"external_labels"`
		ExternalURL    string            `yaml:"external_url"`
		InputSeries    []struct {
			Series string `yaml:"series"`
			Values string `yaml:"values"`
		} `yaml:"input_series"`
		AlertRuleTests []struct {
			EvalTime  string `yaml:"eval_time"`
			Alertname string `yaml:"alertname"`
			ExpAlerts []struct {
				ExpLabels      map[string]string `yaml:"exp_labels"`
				ExpAnnotations map[string]string `yaml:"exp_annotations"`
			} `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
		PromQLExprTests []struct {
			Expr       string `yaml:"expr"`
			EvalTime   string `yaml:"eval_time"`
			ExpSamples []struct {
				Labels string  `yaml:"labels"`
				Value  float64 `yaml:"value"`
			} `yaml:"exp_samples"`
		} `yaml:"promql_expr_test"`
	} `yaml:"tests"`
}

func loadPromtoolTests(t *testing.T, path string) promtoolTestFile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f promtoolTestFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f
}
