package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/cmd/vllmperf/internal/cliflags"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// settingCase is a call that a library refuses for one of its settings
// (package setting), and the flag-named message the command gives for it.
type settingCase struct {
	keys string // cliflags.FlagNames's keys it provokes: "history.Alpha", comma-separated
	args []string
	env  map[string]string // set for the call (the case then runs alone)
	want string
}

// historyRun is a results folder of the history package's recorded runs.
const historyRun = "../../internal/results/history/testdata/sim-seeded/runs/20261205T163041Z-5bcafee"

// settingCases provoke each setting error of cliflags.FlagNames once.
var settingCases = []settingCase{
	{"history.Alpha", []string{"history", "check", "--store", historyStore, "--alpha", "2"}, nil, "--alpha 2: want a level between 0 and 1"},
	{"history.MinChange", []string{"history", "check", "--store", historyStore, "--min-change", "-1"}, nil, "--min-change -1: want a fraction"},
	{"history.MinSize", []string{"history", "check", "--store", historyStore, "--min-size", "1"}, nil, "--min-size 1: a segment needs at least 2 runs"},
	{"history.Permutations", []string{"history", "check", "--store", historyStore, "--permutations", "-1"}, nil, "--permutations -1: want 0 (automatic) or more"},
	{"history.Key", []string{"history", "show", "--store", historyStore, "--key", "gpu"}, nil, `--key "gpu": want key=value pairs`},
	{"history.Since", []string{"history", "show", "--store", historyStore, "--since", "yesterday"}, nil, `--since "yesterday": not a run ID of the store`},
	{"history.Until", []string{"history", "show", "--store", historyStore, "--until", "tomorrow"}, nil, `--until "tomorrow": not a run ID of the store`},
	{"history.Last", []string{"history", "show", "--store", historyStore, "--last", "-1"}, nil, "--last -1: want 0 (all runs) or more"},
	{"history.Benchmarks", []string{"history", "show", "--store", historyStore, "--bench", "profile=[basic"}, nil, `--bench "profile=[basic": syntax error`},
	{"history.Format", []string{"history", "show", "--store", historyStore, "--format", "xml"}, nil, `--format "xml": want table, csv, json`},
	{"history.Baseline", []string{"history", "add", "--store", "STORE", "--baseline", "no-such-baseline.txt", "RESULTS"}, nil, "--baseline: open no-such-baseline.txt"},
	{"history.Store", []string{"history", "show", "--store", "STORE"}, nil, "give the folder `vllmperf history add --store DIR` writes"},
	{"history.Commit", []string{"history", "add", "--store", "STORE", "RESULTS"}, map[string]string{"GIT_DIR": "no-such-git-dir"}, "no --commit given and `git rev-parse HEAD` failed"},
	{"merge.Out", []string{"merge", historyRun}, nil, "merge: no output folder: give --out DIR, a new folder"},
	{"server.Model", []string{"run", "--target", "TWOMODELS", "--concurrency", "1", "--requests", "1"}, nil, "say which to measure with --model or VLLMPERF_MODEL"},
	{"server.MetricsURLs", slices.Concat(runTarget, []string{"--metrics-url", "http://127.0.0.1:9/metrics", "--metrics-url", "http://127.0.0.1:9"}), nil, "--metrics-url (VLLMPERF_METRICS_URLS): http://127.0.0.1:9/metrics is given twice"},
	{"server.Prometheus", slices.Concat(runTarget, []string{"--prometheus", "ftp://127.0.0.1:9", "--prometheus-selector", `{job="vllm"}`}), nil, `--prometheus (VLLMPERF_PROMETHEUS): "ftp://127.0.0.1:9": want an http://`},
	{"server.PrometheusSelector", slices.Concat(runTarget, []string{"--prometheus-selector", `{job="vllm"}`}), nil, "--prometheus-selector (VLLMPERF_PROMETHEUS_SELECTOR) picks series in Prometheus: give --prometheus URL"},
	{"server.Target", []string{"run", "--concurrency", "1", "--requests", "1"}, map[string]string{"VLLMPERF_METRICS_URLS": "http://127.0.0.1:9", "VLLMPERF_BACKEND": "sim"}, "the sim backend starts its own server, whose /metrics is read: drop them, or pass --target"},
	{"server.Target", []string{"run", "--concurrency", "1", "--requests", "1"}, map[string]string{"VLLMPERF_BACKEND": "external", "VLLMPERF_TARGET": ""}, "backend external needs VLLMPERF_TARGET (or --target)"},
	{"suite.Results", slices.Concat(runTarget, []string{"--results", "HELD"}), nil, "--results: results: HELD already holds summary.json"},
	{"capacity.Thresholds", []string{"capacity", "--thresholds", "no-such-thresholds.yaml"}, nil, "--thresholds "},
	{"capacity.Scenario", []string{"capacity", "--scenario", "poisson"}, nil, "--scenario poisson is no capacity search"},
	{"capacity.Size", []string{"capacity", "--size", "huge"}, nil, "--size "},
	{"capacity.Over", []string{"capacity", "--over", "sideways"}, nil, "--over "},
	{"capacity.Start", []string{"capacity", "--start", "-2"}, nil, "--start -2: want a positive first level"},
	{"capacity.MaxRuns", []string{"capacity", "--max-runs", "1"}, nil, "--max-runs 1: want at least 2 runs"},
	{"capacity.MaxTime", []string{"capacity", "--max-time", "-1s"}, nil, "--max-time -1s: want a positive time budget"},
	{"capacity.Backend,capacity.Target,capacity.Headers,capacity.CACert,capacity.ClientCert,capacity.ClientKey", []string{"capacity", "--header", "x-a: b"}, nil,
		"--backend or --target --header, --ca-cert, --client-cert and --client-key say how to reach a running server: give --target too"},
	{"capacity.Profile,capacity.SimArgs", []string{"capacity", "--target", "http://127.0.0.1:9", "--sim-args", "--sim-slowdown 2"}, nil, "--profile and --sim-args: a running server is not started"},
	{"verdict.Format", []string{"upgrade-gate", "--old", "sim", "--new", "sim", "--format", "xml"}, nil, `--format "xml": want one of`},
}

// runTarget runs against a running server at a port nothing serves.
var runTarget = []string{"run", "--target", "http://127.0.0.1:9", "--concurrency", "1", "--requests", "1"}

// TestSettingErrorsNameTheFlag: each setting a library names in an error
// reads as the flag that gives it, exits 2, and every entry of the table
// is provoked by a case here and is a flag of vllmperf. It is not
// parallel, so that its cases with variables may set them.
func TestSettingErrorsNameTheFlag(t *testing.T) {
	for _, tc := range settingCases {
		t.Run(tc.keys, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			if tc.env == nil {
				t.Parallel()
			}
			args := slices.Clone(tc.args)
			for i, a := range args {
				switch a {
				case "STORE":
					args[i] = t.TempDir()
				case "RESULTS":
					args[i] = historyRun
				case "TWOMODELS": // a running server that serves two models
					srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						if r.URL.Path == "/v1/models" {
							fmt.Fprint(w, `{"object":"list","data":[{"id":"a"},{"id":"b"}]}`)
						}
					}))
					t.Cleanup(srv.Close)
					args[i] = srv.URL
				case "HELD": // a folder that holds a run's results
					args[i] = t.TempDir()
					if err := os.WriteFile(filepath.Join(args[i], "summary.json"), []byte("{}"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			want := tc.want
			if i := slices.Index(tc.args, "HELD"); i >= 0 {
				want = strings.ReplaceAll(want, "HELD", args[i])
			}
			var out, errOut bytes.Buffer
			err := run(context.Background(), &out, &errOut, args)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("vllmperf %s: err = %v, want %q", strings.Join(tc.args, " "), err, want)
			}
			wantCode := exitstatus.BadUsage
			if tc.keys == "merge.Out" {
				wantCode = exitstatus.Failed // merge's refusals exit 1 today; kept as it was
			}
			if got := exitstatus.Code(err, &bytes.Buffer{}); got != wantCode {
				t.Errorf("exit status %d, want %d", got, wantCode)
			}
		})
	}
	flags := commandFlags()
	for key, flag := range cliflags.FlagNames {
		if !slices.ContainsFunc(settingCases, func(c settingCase) bool { return slices.Contains(strings.Split(c.keys, ","), key) }) {
			t.Errorf("FlagNames[%q] = %s: no case in settingCases provokes it", key, flag)
		}
		if !flags[strings.TrimPrefix(flag, "--")] {
			t.Errorf("FlagNames[%q] = %s: no command of vllmperf has that flag", key, flag)
		}
	}
}

// commandFlags are the names of every flag of vllmperf's command tree.
func commandFlags() map[string]bool {
	names := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { names[f.Name] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { names[f.Name] = true })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCommand(&bytes.Buffer{}, &bytes.Buffer{}))
	return names
}
