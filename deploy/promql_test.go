package deploy_test

import (
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/deploy"
	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
)

func TestExpandVariables(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"model_name": ".*", "instance": `127\\.0\\.0\\.1:8000`, "__rate_interval": "1m"}
	for _, tc := range []struct {
		name, in, want, wantErr string
	}{
		// $name and ${name} both expand; built-ins are ordinary entries.
		{"plain and braced", `rate(x{model_name=~"$model_name",instance=~"${instance}"}[$__rate_interval])`,
			`rate(x{model_name=~".*",instance=~"127\\.0\\.0\\.1:8000"}[1m])`, ""},
		// A query without variables is unchanged.
		{"no variables", `up == 0`, `up == 0`, ""},
		// A variable the caller does not know is named.
		{"unknown", `x{job=~"$job"}`, "", "unknown variable $job"},
		// Formatted references are refused, not expanded wrongly.
		{"formatted", `x{instance=~"${instance:regex}"}`, "", "${instance:regex}: formatted variables are not supported"},
		// The deprecated [[name]] form is refused with the fix.
		{"deprecated brackets", `x{instance=~"[[instance]]"}`, "", "[[instance]] is Grafana's deprecated syntax: write $instance"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := deploy.ExpandVariables(tc.in, vars)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %q, %v; want error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestCheckNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, expr string
		want       []string // substrings, one per expected error
	}{
		// Current name with its old one through `or`: fine.
		{"gauge with fallback", `vllm:kv_cache_usage_perc or vllm:gpu_cache_usage_perc`, nil},
		// Histogram and counter suffixes are matched on the base name.
		{"histogram with fallback", `rate(vllm:inter_token_latency_seconds_bucket[5m]) or rate(vllm:time_per_output_token_seconds_bucket[5m])`, nil},
		{"counter with fallback", `rate(vllm:prefix_cache_hits_total[5m]) or rate(vllm:gpu_prefix_cache_hits_total[5m])`, nil},
		// Names vLLM never changed need nothing.
		{"unrenamed", `rate(vllm:generation_tokens_total[5m])`, nil},
		// The current name alone misses servers before the rename.
		{"current only", `vllm:kv_cache_usage_perc > 0.9`, []string{"reads vllm:kv_cache_usage_perc but not its pre-rename name vllm:gpu_cache_usage_perc"}},
		// The old name alone misses servers after it.
		{"old only", `rate(vllm:time_per_output_token_seconds_sum[1m])`, []string{"reads vllm:time_per_output_token_seconds, which vLLM renamed to vllm:inter_token_latency_seconds"}},
		// V0-only metrics are always empty on V1.
		{"removed", `vllm:num_requests_swapped + vllm:cpu_cache_usage_perc`, []string{"reads vllm:cpu_cache_usage_perc, a V0-engine metric", "reads vllm:num_requests_swapped, a V0-engine metric"}},
		// A name package scrape does not know is a misspelling.
		{"misspelt", `rate(vllm:num_preemption_total[5m])`, []string{"reads vllm:num_preemption_total, a name vLLM does not expose"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, err := deploy.ParseExpr(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			errs := deploy.CheckNames(e)
			if len(errs) != len(tc.want) {
				t.Fatalf("got %v, want %d errors %q", errs, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("error %d: got %q, want it to contain %q", i, errs[i], w)
				}
			}
		})
	}
}

func TestSelectors(t *testing.T) {
	t.Parallel()
	e, err := deploy.ParseExpr(`sum by (i) (rate(a_total{x="1"}[5m])) / sum by (i) (rate(a_total{x="1"}[5m]) + b) or on () vector(1)`)
	if err != nil {
		t.Fatal(err)
	}
	got, want := strings.Join(deploy.Selectors(e), " | "), `a_total{x="1"} | b`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got, want := strings.Join(deploy.MetricNames(e), " "), "a_total b"; got != want {
		t.Errorf("MetricNames: got %s, want %s", got, want)
	}
}

// TestRenamesAreScrapes: deploy's renames are package scrape's table in
// PromQL's names, both ways: each side of each pair is a name scrape
// reads, and the scraper maps the old name to the current one.
func TestRenamesAreScrapes(t *testing.T) {
	t.Parallel()
	if got, want := len(deploy.Renames), len(serverfamily.VLLM.Renames()); got != want || got == 0 {
		t.Fatalf("deploy has %d renames, scrape %d", got, want)
	}
	for current, old := range deploy.Renames {
		if !scrape.Known(current) || !scrape.Known(old) {
			t.Errorf("%s or %s: a name scrape does not know", current, old)
		}
		for _, s := range []string{"", "_total"} {
			if c := scrape.Canonical(old + s); c != strings.TrimPrefix(old+s, serverfamily.VLLM.Metrics.Prefix) {
				if want := strings.TrimPrefix(current+s, serverfamily.VLLM.Metrics.Prefix); c != want {
					t.Errorf("scrape reads %s%s as %s, deploy as %s", old, s, c, want)
				}
			}
		}
	}
}
