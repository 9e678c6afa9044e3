package perf_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	vllmperf "github.com/vllmperf/vllmperf"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	harnessreport "github.com/vllmperf/vllmperf/internal/results/report"
	"github.com/vllmperf/vllmperf/internal/run/check"
	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
	"github.com/vllmperf/vllmperf/internal/testphase"
	"github.com/vllmperf/vllmperf/internal/thirdparty/llmd"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// The tests in this file point the suite at vLLM-compatible servers it
// did not start, as a user points `go test -run Perf` at a deployment:
// our own simulator and llm-d-inference-sim (the llm-d project's, which we
// did not write), each reached through the external backend. Their names
// match no -run Perf pattern: they start servers of their own.

// serverSetup is how a test wants its server: its max-num-seqs and
// max-model-len, and whether every request should fail.
type serverSetup struct {
	maxNumSeqs, maxModelLen int
	failAll                 bool
}

// realServer starts one kind of vLLM-compatible server for a test and
// returns its base URL; the server stops when the test ends.
type realServer struct {
	name string
	// family is the kind of server (its metric names, its request extras
	// and what it lacks: docs/third-party-servers.md).
	family *serverfamily.Family
	start  func(t *testing.T, s serverSetup) string
}

// strict says whether every metric the suite checks is exposed (our
// simulator), so that a missing one may fail; llm-d's family lacks some and
// runs with strict off.
func (rs realServer) strict() bool { return rs.family.ExposesAll() }

// scenarios are the built-in scenarios the server runs in the suite: all
// of them, but those with a JSON-schema class where the family does not
// guide decoding (every such output fails its schema: llm-d ignores
// response_format, TestRealServerStructured shows it).
func (rs realServer) scenarios(t *testing.T) []string {
	var out []string
	for _, n := range scenario.Names() {
		if rs.family.Extras.GuidedDecoding || !hasSchemaClass(t, n) {
			out = append(out, n)
		}
	}
	return out
}

// hasSchemaClass reports whether a point of the built-in scenario name, at
// quick size, has a class whose output must follow a JSON schema.
func hasSchemaClass(t *testing.T, name string) bool {
	s, err := scenario.Builtin(name)
	require.NoError(t, err)
	for _, p := range s.Points(scenario.Quick) {
		for _, c := range p.Classes {
			if c.Config.Schema != nil {
				return true
			}
		}
	}
	return false
}

var realServers = []realServer{
	{name: "vllm-sim", family: serverfamily.VLLM, start: startVLLMSim},
	// It ignores response_format (no guided decoding): every structured
	// output fails its schema (TestRealServerStructured shows it).
	{name: "llm-d-inference-sim", family: llmd.Family, start: startLLMD},
}

// startVLLMSim runs our simulator in process with the setup's vLLM flags
// (its failures through --sim-fault-500-rate), noise-free.
func startVLLMSim(t *testing.T, s serverSetup) string {
	p, err := profile.Builtin("basic")
	require.NoError(t, err)
	p = p.WithExtraArgs("--max-num-seqs", strconv.Itoa(s.maxNumSeqs), "--max-model-len", strconv.Itoa(s.maxModelLen))
	p = p.WithSimArgs("--sim-cold-start", "0", "--sim-jitter", "0")
	if s.failAll {
		p = p.WithSimArgs("--sim-fault-500-rate", "1")
	}
	srv, err := server.Run(context.Background(), p, server.WithBackend(server.KindSim))
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	return srv.BaseURL()
}

// startLLMD runs llm-d-inference-sim v0.10.2 (built from tools/llmd) with
// the setup, 20 ms to the first token and 5 ms between tokens, as the
// issue that brought it in did; its failures through its own injection.
func startLLMD(t *testing.T, s serverSetup) string {
	args := []string{"--max-num-seqs", strconv.Itoa(s.maxNumSeqs), "--max-model-len", strconv.Itoa(s.maxModelLen),
		"--time-to-first-token", "20ms", "--inter-token-latency", "5ms"}
	if s.failAll {
		args = append(args, "--failure-injection-rate", "100", "--failure-types", "server_error")
	}
	return llmd.StartT(t, args...).BaseURL()
}

// externalSuite is the suite as VLLMPERF_BACKEND=external
// VLLMPERF_TARGET=target VLLMPERF_LABEL=label makes it, at quick size,
// for a server of family fam, with the repository's thresholds (strict as
// the family allows), writing its results folder to dir.
func externalSuite(t *testing.T, target, label string, fam *serverfamily.Family, dir string) *suite.Suite {
	t.Helper()
	th, err := thresholds.Load(vllmperf.ThresholdsFile)
	require.NoError(t, err)
	s, err := suite.New(suite.Config{
		Server:     []server.Option{server.WithBackend(server.KindExternal), server.WithTarget(target), server.WithFamily(fam)},
		Backend:    server.KindExternal,
		Size:       scenario.Quick,
		Profiles:   []string{label},
		Scenarios:  scenario.Names(),
		Thresholds: th.WithStrict(fam.ExposesAll()),
		ResultsDir: dir,
	})
	require.NoError(t, err)
	return s
}

// TestRealServerBatchCap: a server that runs 16 requests at a time with
// 16 more waiting (concurrency 32) passes the batching check at its own
// cap, which the check names; the counters reconcile exactly.
func TestRealServerBatchCap(t *testing.T) {
	testphase.Alone(t)
	for _, rs := range realServers {
		t.Run(rs.name, func(t *testing.T) {
			url := rs.start(t, serverSetup{maxNumSeqs: 16, maxModelLen: 4096})
			s := externalSuite(t, url, rs.name, rs.family, "")
			ss := start(t, s, rs.name)
			defer closeSession(t, ss)
			r, err := ss.Run(context.Background(), pointNamed(t, ss, "concurrency-sweep", "conc=32"))
			require.NoError(t, err)
			b := checkNamed(t, r, "batching")
			assert.Equal(t, check.Pass, b.Status, "%s", b)
			assert.Contains(t, b.Detail, "caps its batch at 16 running")
			assert.Contains(t, b.Detail, "which the suite did not set")
			for _, name := range []string{"reconcile/generation_tokens", "reconcile/prompt_tokens", "reconcile/request_success", "reconcile/ttft_count"} {
				c := checkNamed(t, r, name)
				assert.Equal(t, check.Pass, c.Status, "%s", c)
			}
		})
	}
}

// TestRealServerContextLength: a point whose longest request does not fit
// the server's max_model_len is reported before any request, with the
// numbers the server gave on /v1/models.
func TestRealServerContextLength(t *testing.T) {
	testphase.Alone(t)
	for _, rs := range realServers {
		t.Run(rs.name, func(t *testing.T) {
			url := rs.start(t, serverSetup{maxNumSeqs: 16, maxModelLen: 1024})
			s := externalSuite(t, url, rs.name, rs.family, "")
			ss := start(t, s, rs.name)
			defer closeSession(t, ss)
			pts, err := ss.Points("long-prefill-mix")
			require.NoError(t, err)
			_, err = ss.Run(context.Background(), pts[0])
			var ce *pipeline.ContextError
			require.True(t, errors.As(err, &ce), "error %v, want a *pipeline.ContextError", err)
			assert.Equal(t, 1024, ce.MaxModelLen)
			assert.Greater(t, ce.Longest.Tokens(), 1024)
			assert.Contains(t, err.Error(), "more than the 1024 the server accepts")
			assert.Contains(t, err.Error(), "no request was sent")
		})
	}
}

// TestRealServerMessages: when every request fails, the requests check,
// the results folder's summary.json and the report carry what the server
// said, with counts and HTTP status.
func TestRealServerMessages(t *testing.T) {
	testphase.Alone(t)
	for _, rs := range realServers {
		t.Run(rs.name, func(t *testing.T) {
			url := rs.start(t, serverSetup{maxNumSeqs: 16, maxModelLen: 4096, failAll: true})
			dir := filepath.Join(t.TempDir(), "results")
			s := externalSuite(t, url, rs.name, rs.family, dir)
			ss := start(t, s, rs.name)
			r, err := ss.Run(context.Background(), pointNamed(t, ss, "ttft-tpot", "prompt=short/conc=1"))
			closeSession(t, ss)
			require.NoError(t, err)
			req := checkNamed(t, r, "requests")
			assert.Equal(t, check.Inconclusive, req.Status, "%s", req)
			assert.Contains(t, req.Detail, "; the server said: ")
			assert.Regexp(t, `the server said: \d+× HTTP 5\d\d: .+ \(http_status\)`, req.Detail)
			require.NoError(t, s.Close())
			for _, f := range []string{"summary.json", "report.md", "report.html"} {
				b, err := os.ReadFile(filepath.Join(dir, f))
				require.NoError(t, err)
				assert.Contains(t, string(b), "the server said: ", "%s lacks the server's messages", f)
			}
		})
	}
}

// TestRealServerSuite runs the suite's own tests (TestPerf,
// TestPerfPrefixCachingOff, TestPerfChecksFail) against each server
// through the external backend, as a user runs them: one subject under
// its label, every check passing (strict off where the server lacks
// metrics), and the tests that need servers started with given flags
// skipped with a sentence naming the backend. The run writes a results
// folder (VLLMPERF_RESULTS), whose report renders the deployment's runs:
// the tests of one go test process share it, and the skipped ones skip
// before they could refuse it (issue 40).
func TestRealServerSuite(t *testing.T) {
	testphase.Alone(t)
	if testing.Short() {
		t.Skip("runs the suite's tests in a go test process of its own (a minute a server): not with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to run the suite's tests: %v", err)
	}
	for _, rs := range realServers {
		t.Run(rs.name, func(t *testing.T) {
			url := rs.start(t, serverSetup{maxNumSeqs: 32, maxModelLen: 4096})
			dir := filepath.Join(t.TempDir(), "results")
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, goBin, "test", "-count=1", "-short", "-v",
				"-run", "^(TestPerf|TestPerfPrefixCachingOff|TestPerfChecksFail)$", ".")
			cmd.Env = append(os.Environ(), "VLLMPERF_BACKEND=external", "VLLMPERF_TARGET="+url, "VLLMPERF_LABEL="+rs.name,
				"VLLMPERF_STRICT="+strconv.FormatBool(rs.strict()), "VLLMPERF_PROFILES=", "VLLMPERF_SCENARIOS="+strings.Join(rs.scenarios(t), ","), "VLLMPERF_RESULTS="+dir, "VLLMPERF_SIM_ARGS=")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			text := out.String()
			require.NoError(t, err, "go test -run Perf against %s:\n%s", rs.name, text)
			for _, want := range []string{
				"--- PASS: TestPerf ",
				"--- PASS: TestPerf/profiles/" + rs.name + " ",
				"profile differences not compared: the external backend measures one deployment with its own flags (" + rs.name + ")",
				"--- SKIP: TestPerfPrefixCachingOff",
				"the external backend cannot restart the deployment with --no-enable-prefix-caching: its flags are its own",
				"--- SKIP: TestPerfChecksFail",
				"the faults are the simulator's",
			} {
				assert.Contains(t, text, want)
			}
			// One subject: no built-in profile ran.
			for _, p := range profile.Names() {
				assert.NotContains(t, text, "TestPerf/profiles/"+p+" ", "profile %s ran against a deployment", p)
			}
			// The results folder: every scenario's runs, under the label
			// (TestPerf runs no capacity search: its points are the search's).
			var rep bytes.Buffer
			require.NoError(t, harnessreport.Print(&rep, dir, "", nil))
			for _, name := range append([]string{"startup"}, rs.scenarios(t)...) {
				if sc, err := scenario.Builtin(name); err == nil && sc.Capacity != nil {
					continue
				}
				assert.Contains(t, rep.String(), "profile="+rs.name+"/scenario="+name, "the report of %s", dir)
			}
		})
	}
}

// session starts the server (16 running, a 4096-token context) and a
// suite session on it as the external backend; both end with the test.
func (rs realServer) session(t *testing.T) *suite.Session {
	url := rs.start(t, serverSetup{maxNumSeqs: 16, maxModelLen: 4096})
	ss := start(t, externalSuite(t, url, rs.name, rs.family, ""), rs.name)
	t.Cleanup(func() { closeSession(t, ss) })
	return ss
}

// TestRealServerDatasets: a ShareGPT file, a JSONL file and a trace run
// through the suite on each server, every check passing, and the prompt
// tokens the suite reports are the server's own /tokenize counts, which
// its usage confirms request by request.
func TestRealServerDatasets(t *testing.T) {
	testphase.Alone(t)
	for _, rs := range realServers {
		t.Run(rs.name, func(t *testing.T) {
			ss := rs.session(t)
			for _, name := range []string{"datasets", "trace-replay", "chat-live"} {
				pts, err := ss.Points(name)
				require.NoError(t, err)
				for _, pt := range pts {
					r, err := ss.Run(context.Background(), pt)
					require.NoError(t, err)
					requireChecks(t, r)
					l := r.Result.Lengths
					require.True(t, l.Tokenize, "%s: /tokenize answered", r.Name)
					assert.Zero(t, l.Mismatched, "%s: usage and /tokenize agree request by request", r.Name)
					assert.Empty(t, r.Result.Warnings, r.Name)
				}
			}
		})
	}
}

// TestRealServerStructured: the structured-output scenario's tool point
// passes on every server; its JSON-schema point passes where the server
// guides decoding (our simulator) and, where it does not (llm-d ignores
// response_format), fails every request with kind schema, by name.
func TestRealServerStructured(t *testing.T) {
	testphase.Alone(t)
	for _, rs := range realServers {
		t.Run(rs.name, func(t *testing.T) {
			assert.Equal(t, rs.family.Extras.GuidedDecoding, slices.Contains(rs.scenarios(t), "structured-output"),
				"the suite runs structured-output exactly where the family guides decoding")
			ss := rs.session(t)
			tool, err := ss.Run(context.Background(), pointNamed(t, ss, "structured-output", "prompt=tool/conc=4"))
			require.NoError(t, err)
			requireChecks(t, tool)
			doc, err := ss.Run(context.Background(), pointNamed(t, ss, "structured-output", "prompt=json/conc=4"))
			require.NoError(t, err)
			if rs.family.Extras.GuidedDecoding {
				requireChecks(t, doc)
				return
			}
			sum := doc.Result.Summary
			assert.Equal(t, sum.Requests, sum.FailedByKind[sample.ErrSchema], "every output fails its schema")
			req := checkNamed(t, doc, "requests")
			assert.Contains(t, req.Detail, "schema")
		})
	}
}
