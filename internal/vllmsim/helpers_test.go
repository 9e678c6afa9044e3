package vllmsim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"

	"github.com/vllmperf/vllmperf/internal/simtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fastArgs make the engine's timing exact and short so that tests are quick
// and deterministic.
var fastArgs = []string{"sim-model", "--sim-fixed-ttft", "5ms", "--sim-fixed-itl", "1ms", "--disable-log-stats"}

// sim is a running simulator for one test.
type sim struct {
	s   *Server
	url string
	log *simtest.Buffer
}

// startSim serves New(fastArgs + args) on 127.0.0.1:0 until the test ends.
func startSim(t *testing.T, args ...string) *sim {
	t.Helper()
	return startSimRaw(t, append(append([]string{}, fastArgs...), args...)...)
}

// startSimRaw serves New(args) on 127.0.0.1:0 until the test ends.
func startSimRaw(t *testing.T, args ...string) *sim {
	t.Helper()
	log := &simtest.Buffer{}
	s, err := New(args, log)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return &sim{s: s, url: simtest.Serve(t, s), log: log}
}

// post sends a JSON body and returns the response, body read.
func (m *sim) post(t *testing.T, path, body string, header ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, m.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: read body: %v", path, err)
	}
	return resp.StatusCode, b
}

func (m *sim) get(t *testing.T, path string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(m.url + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read body: %v", path, err)
	}
	return resp.StatusCode, b
}

// sseEvent is one "data:" event with its arrival time.
type sseEvent struct {
	data string
	at   time.Time
}

// streamResult is a whole SSE response.
type streamResult struct {
	status int
	events []sseEvent // [DONE] excluded
	done   bool       // data: [DONE] seen
	err    error      // read error (a cut connection)
	start  time.Time
}

// stream posts body and reads the SSE response to its end.
func (m *sim) stream(t *testing.T, ctx context.Context, path, body string) streamResult {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res := streamResult{start: time.Now()}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		res.err = err
		return res
	}
	defer resp.Body.Close()
	res.status = resp.StatusCode
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			res.err = errors.New("line without data: prefix: " + line)
			return res
		}
		if data == "[DONE]" {
			res.done = true
			continue
		}
		res.events = append(res.events, sseEvent{data: data, at: time.Now()})
	}
	res.err = sc.Err()
	return res
}

// wireChunk is a streamed chunk as a client decodes it.
type wireChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta *struct {
			Role    *string `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		Text         *string `json:"text"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage    `json:"usage"`
	Error *apiError `json:"error"`
}

func decodeChunks(t *testing.T, events []sseEvent) []wireChunk {
	t.Helper()
	out := make([]wireChunk, len(events))
	for i, e := range events {
		if err := json.Unmarshal([]byte(e.data), &out[i]); err != nil {
			t.Fatalf("chunk %d %q: %v", i, e.data, err)
		}
	}
	return out
}

// chunkText is the text a chunk carries (chat delta content or completion text).
func (c wireChunk) text() string {
	if len(c.Choices) == 0 {
		return ""
	}
	ch := c.Choices[0]
	if ch.Delta != nil && ch.Delta.Content != nil {
		return *ch.Delta.Content
	}
	if ch.Text != nil {
		return *ch.Text
	}
	return ""
}

// scrape parses /metrics.
func (m *sim) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := m.get(t, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: status %d: %s", code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	return mfs
}

// sum adds a family's values whose labels contain every pair of match.
func sum(mfs map[string]*dto.MetricFamily, name string, match ...string) float64 {
	mf := mfs[name]
	if mf == nil {
		return 0
	}
	var total float64
	for _, m := range mf.GetMetric() {
		if !hasLabels(m, match...) {
			continue
		}
		switch {
		case m.GetCounter() != nil:
			total += m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			total += m.GetGauge().GetValue()
		case m.GetUntyped() != nil:
			total += m.GetUntyped().GetValue()
		}
	}
	return total
}

func hasLabels(m *dto.Metric, match ...string) bool {
	for i := 0; i+1 < len(match); i += 2 {
		found := false
		for _, lp := range m.GetLabel() {
			if lp.GetName() == match[i] && lp.GetValue() == match[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// waitFor polls cond every 10 ms until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cond()
}
