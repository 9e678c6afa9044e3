package deploy_test

// TestLivePrometheus runs the shipped rules and dashboard on a real
// Prometheus that scrapes three simulators under load, all on 127.0.0.1:
//
//	current  vLLM's current metric names, healthy
//	v0.9     vLLM 0.9's names (gpu_cache_usage_perc, gpu_prefix_cache_*,
//	         time_per_output_token_seconds), healthy
//	slow     every first token twice the TTFT SLO late (--sim-fixed-ttft)
//
// It checks that every rule evaluates without error, that every recording
// rule and every dashboard query returns data for every target (so both
// name generations feed them), that every series selector in the rules and
// the dashboard matches something, and that the TTFT alert (a copy with a
// 1s for:) fires on the slow target and nothing fires on the healthy ones.

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"

	"github.com/vllmperf/vllmperf/deploy"
	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/request/workload"
)

const (
	// liveBudget bounds the live part (after the simulator is built).
	liveBudget = 60 * time.Second
	liveModel  = "Qwen/Qwen3-0.6B"
	// liveInterval is the scrape and rule evaluation interval of the test.
	liveInterval = "1s"
	// shortForLabel marks the test's copies of the alerts, whose for: is
	// liveInterval instead of minutes.
	shortForLabel = "live_test"
	shortForValue = "short-for"
	// The job the shipped prometheus.yml scrapes vLLM with.
	vllmJob = "vllm"
)

// liveTarget is one simulator of the live test.
type liveTarget struct {
	name    string
	simArgs []string        // vllm-sim flags on top of the common ones
	work    workload.Config // its requests
	load    load.Config     // how many, how many at once
	healthy bool            // no alert may be active for it
	addr    string          // host:port, once started (Prometheus's instance)
}

func TestLivePrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus and three simulators; skipped with -short")
	}
	promBin := requireTool(t, "prometheus", installPrometheus)
	goBin := requireTool(t, "go", "the Go toolchain builds cmd/vllm-sim")
	files := shippedRules(t)
	dash := shippedDashboard(t)
	slo := sloValue(t, files, sloTTFTRecord)
	if slo > 10 {
		t.Fatalf("%s = %v s: the live test makes a simulator twice as slow as the SLO, which needs the SLO ≤ 10 s to stay short", sloTTFTRecord, slo)
	}

	dir := t.TempDir()
	simBin := buildSim(t, goBin, dir)

	begin := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), liveBudget)
	defer cancel()

	healthyWork := workload.Config{Model: liveModel, PromptTokens: 48, SharedPrefixTokens: 32, MaxTokens: 16, IgnoreEOS: true, Seed: 1}
	healthyLoad := load.Config{Concurrency: 4, Requests: 32, Duration: 20 * time.Second, Grace: 5 * time.Second}
	targets := []*liveTarget{
		{name: "current", work: healthyWork, load: healthyLoad, healthy: true},
		{name: "v0.9", simArgs: []string{"--sim-metrics-version", "0.9"}, work: healthyWork, load: healthyLoad, healthy: true},
		{name: "slow", simArgs: []string{"--sim-fixed-ttft", seconds(2 * slo).String(), "--sim-fixed-itl", "10ms"},
			work: workload.Config{Model: liveModel, PromptTokens: 16, MaxTokens: 4, IgnoreEOS: true, Seed: 2},
			load: load.Config{Concurrency: 2, Requests: 4, Duration: 20 * time.Second, Grace: 5 * time.Second}},
	}
	for _, tg := range targets {
		tg.addr = startSim(ctx, t, dir, simBin, tg)
	}
	prom := startPrometheus(ctx, t, dir, promBin, targets, files)

	waitFor(ctx, t, "every target scraped (up == 1)", func() (bool, string) {
		v, err := queryVector(ctx, prom, fmt.Sprintf(`up{job=%q} == 1`, vllmJob))
		if err != nil {
			return false, err.Error()
		}
		return len(v) == len(targets), fmt.Sprintf("%d of %d targets up", len(v), len(targets))
	})
	t.Logf("Prometheus scraping every target %v after the start", time.Since(begin).Round(100*time.Millisecond))
	driveLoad(ctx, t, targets)
	t.Logf("load done %v after the start", time.Since(begin).Round(100*time.Millisecond))
	slow := targets[2]
	waitFor(ctx, t, "recorded throughput of every target and the TTFT alert firing on "+slow.name, func() (bool, string) {
		v, err := queryVector(ctx, prom, "instance_model:vllm_generation_tokens:rate5m > 0")
		if err != nil {
			return false, err.Error()
		}
		if missing := missingInstances(v, targets); len(missing) > 0 {
			return false, "no throughput recorded yet for " + strings.Join(missing, ", ")
		}
		firing, err := shortForAlerts(ctx, prom, slow.addr, promv1.AlertStateFiring)
		if err != nil {
			return false, err.Error()
		}
		return firing["VLLMTimeToFirstTokenP99OverSLO"] != nil, fmt.Sprintf("alerts firing on %s: %v", slow.name, keys(firing))
	})
	t.Logf("TTFT alert firing %v after the start of the live part", time.Since(begin).Round(100*time.Millisecond))

	t.Run("rules evaluate", func(t *testing.T) { checkRuleHealth(ctx, t, prom, files) })
	t.Run("recording rules return data for every target", func(t *testing.T) { checkRecordingRules(ctx, t, prom, files, targets) })
	t.Run("alert expressions evaluate", func(t *testing.T) { checkAlertExpressions(ctx, t, prom, files) })
	t.Run("dashboard queries return data for every target", func(t *testing.T) { checkDashboard(ctx, t, prom, dash, targets) })
	t.Run("every selector matches series", func(t *testing.T) { checkSelectors(ctx, t, prom, files, dash) })
	t.Run("both name generations give real values", func(t *testing.T) { checkValues(ctx, t, prom, targets) })
	t.Run("TTFT alert fires only where TTFT is over the SLO", func(t *testing.T) { checkAlerts(ctx, t, prom, targets, slow) })
	t.Logf("live part (Prometheus, three simulators, load, checks) took %v", time.Since(begin).Round(100*time.Millisecond))
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// buildSim builds cmd/vllm-sim into dir.
func buildSim(t *testing.T, goBin, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "vllm-sim")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", out, "github.com/vllmperf/vllmperf/cmd/vllm-sim")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/vllm-sim: %v\n%s", err, b)
	}
	t.Logf("built vllm-sim in %v", time.Since(start).Round(100*time.Millisecond))
	return out
}

// freePort returns a loopback port nothing listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// process is a child process whose output goes to a log file.
type process struct {
	name, logPath string
	exited        chan struct{}
	err           error // set when exited is closed
}

// startProcess starts bin and registers its stop: SIGTERM, then SIGKILL
// after 10 s. On failure the cleanup prints the end of its log.
func startProcess(t *testing.T, dir, name, bin string, args ...string) *process {
	t.Helper()
	p := &process{name: name, logPath: filepath.Join(dir, name+".log"), exited: make(chan struct{})}
	logFile, err := os.Create(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("%s: %s, log %s ends:\n%s", name, cmd.String(), p.logPath, tailFile(p.logPath, 30))
		}
	})
	return p
}

// tailFile returns the last n lines of a file.
func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// waitHTTP polls url until it answers 200, the process exits or ctx ends.
func waitHTTP(ctx context.Context, t *testing.T, p *process, url string) {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	client := &http.Client{Timeout: 2 * time.Second} // one hung probe must not eat the budget
	var last string
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-p.exited:
			t.Fatalf("%s exited before %s answered: %v\n%s", p.name, url, p.err, tailFile(p.logPath, 30))
		case <-ctx.Done():
			t.Fatalf("%s: %s did not answer 200 in time (last: %s)\n%s", p.name, url, last, tailFile(p.logPath, 30))
		case <-tick.C:
		}
	}
}

// startSim starts one simulator and waits for /health; it returns host:port.
func startSim(ctx context.Context, t *testing.T, dir, bin string, tg *liveTarget) string {
	t.Helper()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	host, port, _ := net.SplitHostPort(addr)
	args := append([]string{liveModel, "--host", host, "--port", port, "--sim-cold-start", "0"}, tg.simArgs...)
	p := startProcess(t, dir, "vllm-sim-"+tg.name, bin, args...)
	waitHTTP(ctx, t, p, "http://"+addr+"/health")
	return addr
}

// startPrometheus writes a config from the shipped prometheus.yml (its vLLM
// job aimed at the targets, 1s intervals, the shipped rules plus the
// short-for alert copies), starts Prometheus and waits until it is ready.
func startPrometheus(ctx context.Context, t *testing.T, dir, bin string, targets []*liveTarget, files []*deploy.RuleFile) promv1.API {
	t.Helper()
	var ruleFiles []string
	for _, f := range files {
		abs, err := filepath.Abs(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		ruleFiles = append(ruleFiles, abs)
	}
	ruleFiles = append(ruleFiles, writeShortForAlerts(t, dir, files))
	var addrs []string
	for _, tg := range targets {
		addrs = append(addrs, tg.addr)
	}
	cfgPath := writePromConfig(t, dir, addrs, ruleFiles)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	p := startProcess(t, dir, "prometheus", bin,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+addr,
	)
	waitHTTP(ctx, t, p, "http://"+addr+"/-/ready")
	client, err := api.NewClient(api.Config{Address: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	return promv1.NewAPI(client)
}

// writePromConfig derives the test's Prometheus config from the shipped
// one: only its vLLM job (relabelling and all) with static targets on
// loopback, scrapes and evaluations every liveInterval, and ruleFiles.
func writePromConfig(t *testing.T, dir string, targets, ruleFiles []string) string {
	t.Helper()
	data, err := os.ReadFile(promConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	var shipped struct {
		Global        map[string]any   `yaml:"global"`
		ScrapeConfigs []map[string]any `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(data, &shipped); err != nil {
		t.Fatalf("%s: %v", promConfigPath, err)
	}
	var job map[string]any
	for _, sc := range shipped.ScrapeConfigs {
		if sc["job_name"] == vllmJob {
			job = sc
		}
	}
	if job == nil {
		t.Fatalf("%s has no scrape job %q (the alerts select up{job=%q})", promConfigPath, vllmJob, vllmJob)
	}
	for _, key := range []string{"scrape_interval", "scrape_timeout"} {
		delete(job, key) // the global 1s applies
	}
	job["static_configs"] = []any{map[string]any{"targets": targets}}
	global := shipped.Global
	if global == nil {
		global = map[string]any{}
	}
	global["scrape_interval"] = liveInterval
	global["scrape_timeout"] = liveInterval
	global["evaluation_interval"] = liveInterval
	out, err := yaml.Marshal(map[string]any{
		"global":         global,
		"rule_files":     ruleFiles,
		"scrape_configs": []any{job},
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeShortForAlerts writes a rule file with a copy of every shipped alert,
// labelled live_test="short-for", whose for: is liveInterval.
func writeShortForAlerts(t *testing.T, dir string, files []*deploy.RuleFile) string {
	t.Helper()
	group := deploy.RuleGroup{Name: "vllm-alerts-short-for"}
	for _, f := range files {
		for _, r := range f.Rules() {
			if r.Alert == "" {
				continue
			}
			labels := map[string]string{shortForLabel: shortForValue}
			for k, v := range r.Labels {
				labels[k] = v
			}
			r.For, r.Labels = liveInterval, labels
			group.Rules = append(group.Rules, r)
		}
	}
	out, err := yaml.Marshal(map[string]any{"groups": []deploy.RuleGroup{group}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "short-for.rules.yml")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// driveLoad runs every target's load at once through the harness's client
// and fails on any failed request.
func driveLoad(ctx context.Context, t *testing.T, targets []*liveTarget) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(targets))
	for i, tg := range targets {
		wg.Go(func() {
			errs[i] = runTargetLoad(ctx, tg)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("load on %s: %v", targets[i].name, err)
		}
	}
}

func runTargetLoad(ctx context.Context, tg *liveTarget) error {
	gen, err := workload.New(tg.work)
	if err != nil {
		return err
	}
	client := openai.New("http://" + tg.addr)
	defer client.CloseIdleConnections()
	res, err := load.Run(ctx, tg.load, client, gen.Next)
	if err != nil {
		return err
	}
	if res.Canceled {
		return fmt.Errorf("canceled after %d requests: the live test ran out of time", len(res.Samples))
	}
	for _, s := range res.Samples {
		if !s.OK() {
			return fmt.Errorf("request %d failed: %v", s.Index, s.Err)
		}
	}
	if got, want := len(res.Samples), tg.load.Requests; got != want {
		return fmt.Errorf("%d requests sent, want %d", got, want)
	}
	return nil
}

// waitFor polls cond until it holds; at the deadline it fails with what
// cond last reported.
func waitFor(ctx context.Context, t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, state := cond()
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v (last: %s)", what, ctx.Err(), state)
		case <-tick.C:
		}
	}
}

// queryVector evaluates expr now; a non-vector result is an error.
func queryVector(ctx context.Context, prom promv1.API, expr string) (model.Vector, error) {
	v, _, _, err := prom.Query(ctx, expr, time.Time{})
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", expr, err)
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("query %s: got a %s, want a vector", expr, v.Type())
	}
	return vec, nil
}

// missingInstances names the targets with no sample in v. A result without
// instance labels (vector(1)) misses none.
func missingInstances(v model.Vector, targets []*liveTarget) []string {
	seen := map[string]bool{}
	labelled := false
	for _, s := range v {
		if inst, ok := s.Metric[model.InstanceLabel]; ok {
			labelled = true
			seen[string(inst)] = true
		}
	}
	if !labelled && len(v) > 0 {
		return nil
	}
	var out []string
	for _, tg := range targets {
		if !seen[tg.addr] {
			out = append(out, tg.name+" ("+tg.addr+")")
		}
	}
	return out
}

// shortForAlerts returns the test's alert copies in the given state for one
// instance, by alert name.
func shortForAlerts(ctx context.Context, prom promv1.API, instance string, states ...promv1.AlertState) (map[string]*promv1.Alert, error) {
	res, err := prom.Alerts(ctx)
	if err != nil {
		return nil, fmt.Errorf("alerts: %w", err)
	}
	out := map[string]*promv1.Alert{}
	for i, a := range res.Alerts {
		if a.Labels[shortForLabel] != shortForValue || string(a.Labels[model.InstanceLabel]) != instance {
			continue
		}
		for _, st := range states {
			if a.State == st {
				out[string(a.Labels[model.AlertNameLabel])] = &res.Alerts[i]
			}
		}
	}
	return out, nil
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkRuleHealth: Prometheus loaded every shipped rule (and the copies)
// and evaluated each without error.
func checkRuleHealth(ctx context.Context, t *testing.T, prom promv1.API, files []*deploy.RuleFile) {
	res, err := prom.Rules(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	loaded := map[string]bool{}
	for _, g := range res.Groups {
		for _, r := range g.Rules {
			var name, health, lastErr string
			switch r := r.(type) {
			case promv1.RecordingRule:
				name, health, lastErr = r.Name, string(r.Health), r.LastError
			case promv1.AlertingRule:
				name, health, lastErr = r.Name, string(r.Health), r.LastError
			}
			loaded[name] = true
			if health != string(promv1.RuleHealthGood) || lastErr != "" {
				t.Errorf("group %s, rule %s: health %q, last error %q", g.Name, name, health, lastErr)
			}
		}
	}
	for _, f := range files {
		for _, r := range f.Rules() {
			if !loaded[r.Name()] {
				t.Errorf("%s: not loaded by Prometheus", r.Where(f.Path))
			}
		}
	}
}

// checkRecordingRules: each recording rule's expression returns a sample
// for every target.
func checkRecordingRules(ctx context.Context, t *testing.T, prom promv1.API, files []*deploy.RuleFile, targets []*liveTarget) {
	for _, f := range files {
		for _, r := range f.Rules() {
			if r.Record == "" {
				continue
			}
			v, err := queryVector(ctx, prom, r.Expr)
			switch {
			case err != nil:
				t.Errorf("%s: %v", r.Where(f.Path), err)
			case len(v) == 0:
				t.Errorf("%s: no data", r.Where(f.Path))
			default:
				if missing := missingInstances(v, targets); len(missing) > 0 {
					t.Errorf("%s: no data for %s", r.Where(f.Path), strings.Join(missing, ", "))
				}
			}
		}
	}
}

// checkAlertExpressions: each alert's expression evaluates (its result may
// be empty: the servers are mostly healthy; checkSelectors covers inputs).
func checkAlertExpressions(ctx context.Context, t *testing.T, prom promv1.API, files []*deploy.RuleFile) {
	for _, f := range files {
		for _, r := range f.Rules() {
			if r.Alert == "" {
				continue
			}
			if _, err := queryVector(ctx, prom, r.Expr); err != nil {
				t.Errorf("%s: %v", r.Where(f.Path), err)
			}
		}
	}
}

// checkDashboard: each panel query returns data with $instance set to each
// target in turn; each variable lists every target.
func checkDashboard(ctx context.Context, t *testing.T, prom promv1.API, dash *deploy.Dashboard, targets []*liveTarget) {
	for _, q := range dash.Queries() {
		for _, tg := range targets {
			// As Grafana interpolates a single value into =~"...": the
			// regexp escaped, then its backslashes escaped for PromQL.
			instance := strings.ReplaceAll(regexp.QuoteMeta(tg.addr), `\`, `\\`)
			vars := map[string]string{"model_name": ".*", "instance": instance, "__rate_interval": "1m"}
			expr, err := deploy.ExpandVariables(q.Expr, vars)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			v, err := queryVector(ctx, prom, expr)
			if err != nil {
				t.Errorf("%s: %v", q, err)
				continue
			}
			if len(v) == 0 {
				t.Errorf("%s: no data for %s (%s):\n%s", q, tg.name, tg.addr, expr)
			}
		}
	}
	for _, variable := range dash.Templating.List {
		if variable.Type != "query" {
			continue
		}
		sel, label, err := variable.VariableSelector()
		if err != nil {
			t.Error(err)
			continue
		}
		expr, err := deploy.ExpandVariables(sel, staticVars)
		if err != nil {
			t.Errorf("variable %s: %v", variable.Name, err)
			continue
		}
		v, err := queryVector(ctx, prom, fmt.Sprintf("count by (%s) (%s)", label, expr))
		if err != nil {
			t.Errorf("variable %s: %v", variable.Name, err)
			continue
		}
		if label == string(model.InstanceLabel) {
			if missing := missingInstances(v, targets); len(missing) > 0 {
				t.Errorf("variable %s does not list %s", variable.Name, strings.Join(missing, ", "))
			}
		} else if len(v) == 0 {
			t.Errorf("variable %s lists nothing", variable.Name)
		}
	}
}

// checkSelectors: every series selector of the rules and the dashboard
// matches at least one series. With a current-name and a 0.9-name target
// both sides of every `or` fallback must match.
func checkSelectors(ctx context.Context, t *testing.T, prom promv1.API, files []*deploy.RuleFile, dash *deploy.Dashboard) {
	where := map[string]string{} // selector -> first place it appears
	add := func(place, expr string) {
		e, err := deploy.ParseExpr(expr)
		if err != nil {
			t.Errorf("%s: %v", place, err)
			return
		}
		for _, s := range deploy.Selectors(e) {
			if _, ok := where[s]; !ok {
				where[s] = place
			}
		}
	}
	for _, f := range files {
		for _, r := range f.Rules() {
			add(r.Where(f.Path), r.Expr)
		}
	}
	for _, q := range dash.Queries() {
		expr, err := deploy.ExpandVariables(q.Expr, staticVars)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		add(q.String(), expr)
	}
	selectors := keys(where)
	for _, s := range selectors {
		v, err := queryVector(ctx, prom, s)
		switch {
		case err != nil:
			t.Errorf("%s: %v", where[s], err)
		case len(v) == 0:
			t.Errorf("%s: selector %s matches no series", where[s], s)
		}
	}
	t.Logf("%d distinct selectors, each matching series", len(selectors))
}

// checkValues: the normalized series carry measured values, not just
// series: tokens flowed on every target, and the prefix cache (the shared
// system prompt) hit on both healthy ones, whichever names they expose.
func checkValues(ctx context.Context, t *testing.T, prom promv1.API, targets []*liveTarget) {
	for _, c := range []struct {
		expr    string
		targets []*liveTarget
	}{
		{"instance_model:vllm_generation_tokens:rate5m > 0", targets},
		{"instance_model:vllm_requests_finished:rate5m > 0", targets},
		{"instance_model:vllm_prefix_cache_hit:ratio_rate5m > 0", targets[:2]},
		{"instance_model:vllm_inter_token_latency_seconds:p50_rate5m > 0", targets},
		{"instance_model:vllm_time_to_first_token_seconds:p99_rate5m > 0", targets},
	} {
		v, err := queryVector(ctx, prom, c.expr)
		if err != nil {
			t.Error(err)
			continue
		}
		for _, s := range v {
			if math.IsNaN(float64(s.Value)) {
				t.Errorf("%s: NaN for %s", c.expr, s.Metric)
			}
		}
		if missing := missingInstances(v, c.targets); len(missing) > 0 {
			t.Errorf("%s: false for %s (got %v)", c.expr, strings.Join(missing, ", "), v)
		}
	}
}

// checkAlerts: the short-for TTFT alert fires on the slow target with its
// annotations rendered (the SLO read back through the query template), and
// no alert at all is pending or firing on the healthy targets.
func checkAlerts(ctx context.Context, t *testing.T, prom promv1.API, targets []*liveTarget, slow *liveTarget) {
	firing, err := shortForAlerts(ctx, prom, slow.addr, promv1.AlertStateFiring)
	if err != nil {
		t.Fatal(err)
	}
	a := firing["VLLMTimeToFirstTokenP99OverSLO"]
	if a == nil {
		t.Fatalf("VLLMTimeToFirstTokenP99OverSLO not firing on %s: %v", slow.name, keys(firing))
	}
	desc := string(a.Annotations["description"])
	if !strings.Contains(desc, "above the SLO of ") || strings.Contains(desc, "<no value>") || strings.Contains(desc, "error") {
		t.Errorf("description not rendered right: %q", desc)
	}
	t.Logf("firing on %s: %s", slow.name, desc)
	for _, tg := range targets {
		if !tg.healthy {
			continue
		}
		active, err := shortForAlerts(ctx, prom, tg.addr, promv1.AlertStateFiring, promv1.AlertStatePending)
		if err != nil {
			t.Fatal(err)
		}
		if len(active) > 0 {
			t.Errorf("alerts active on healthy target %s: %v", tg.name, keys(active))
		}
	}
}
