package openai

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
)

var (
	errScheme = errors.New("scheme must be http or https")
	errNoHost = errors.New("missing host")
)

// stateKey carries a request's *reqState through the request context to doer.
type stateKey struct{}

// reqState is what Send and doer share about one request. doer runs on the
// goroutine that called Send (go-openai calls Do synchronously), so it needs
// no locking; only the watchdog's clock is shared with a timer goroutine.
type reqState struct {
	req    *Request
	s      *sample.Sample
	dog    *watchdog
	body   io.ReadCloser // the response body, once headers arrived
	posted bool          // the POST was handed to the HTTP client
}

// doer is the go-openai HTTPDoer. It rewrites the JSON body go-openai built
// to add what go-openai cannot send (temperature 0, max_tokens outside its
// reasoning-model checks, and the server family's extras: min_tokens,
// ignore_eos, stream_options with continuous usage), stamps Sent just before the POST and Header when the
// response headers arrive, rejects a 2xx answer that is not an SSE stream,
// and bounds what the stream may buffer (eventReader).
type doer struct {
	inner    goopenai.HTTPDoer
	apiKey   string               // redacted from the body snippets in error messages
	maxEvent int                  // eventReader's cap; <= 0: none
	family   *serverfamily.Family // names the request extras
}

// protocolError is a response doer could not accept as a stream.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return e.msg }

// statusError is a status go-openai would not treat as a failure (1xx, 3xx).
type statusError struct {
	status int
	msg    string
}

func (e *statusError) Error() string { return e.msg }

// maxErrorBody bounds how much of an unexpected body is read for a message.
const maxErrorBody = 512

// Do implements goopenai.HTTPDoer.
func (d *doer) Do(r *http.Request) (*http.Response, error) {
	st, _ := r.Context().Value(stateKey{}).(*reqState)
	if st == nil {
		return d.inner.Do(r) // not a Send request: pass through untouched
	}
	if r.Body != nil {
		raw, err := io.ReadAll(r.Body)
		_ = r.Body.Close()
		if err != nil {
			return nil, &protocolError{msg: "read request body: " + err.Error()}
		}
		body, err := extendBody(raw, st.req, d.family)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	st.posted = true
	st.s.Sent = time.Now()
	resp, err := d.inner.Do(r)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	st.s.Header = now
	st.dog.event(now)
	if resp.StatusCode >= 400 {
		// go-openai reads the error body whole: it gets the first
		// maxErrorRead bytes, so that a body that never ends cannot take
		// the client's memory.
		resp.Body = boundedBody(resp.Body)
		return resp, nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := fmt.Sprintf("unexpected status %s%s", resp.Status, bodySnippet(resp.Body, d.apiKey))
		_ = resp.Body.Close()
		return nil, &statusError{status: resp.StatusCode, msg: msg}
	}
	if ct := resp.Header.Get("Content-Type"); !isEventStream(ct) {
		msg := fmt.Sprintf("content type %q, want text/event-stream%s", ct, bodySnippet(resp.Body, d.apiKey))
		_ = resp.Body.Close()
		return nil, &protocolError{msg: msg}
	}
	resp.Body = newEventReader(resp.Body, d.maxEvent)
	st.body = resp.Body
	return resp, nil
}

// maxErrorRead bounds the error body of a failed request handed to
// go-openai (an OpenAI error object is well under 1 KiB).
const maxErrorRead = 64 << 10

// boundedBody reads at most maxErrorRead bytes of body, closes it, and
// returns what was read; a body cut off reads as cut (go-openai then
// keeps it raw in its RequestError).
func boundedBody(body io.ReadCloser) io.ReadCloser {
	b, _ := io.ReadAll(io.LimitReader(body, maxErrorRead))
	_ = body.Close()
	return io.NopCloser(bytes.NewReader(b))
}

// isEventStream reports whether a Content-Type header names an SSE stream.
func isEventStream(ct string) bool {
	const want = "text/event-stream"
	return len(ct) >= len(want) && strings.EqualFold(ct[:len(want)], want)
}

// bodySnippet reads the start of an unexpected body for an error message.
// The key is redacted before the snippet is cut, so no part of it shows.
func bodySnippet(r io.Reader, apiKey string) string {
	b, _ := io.ReadAll(io.LimitReader(r, int64(maxErrorBody+len(apiKey))))
	text := strings.TrimSpace(redactKey(string(b), apiKey))
	if text == "" {
		return ""
	}
	return fmt.Sprintf(", body %q", clip(text, maxErrorBody))
}

// redactKey replaces every occurrence of key in s.
func redactKey(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[REDACTED]")
}

// clip cuts s to at most n bytes, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// extendBody appends the fields go-openai cannot send to the JSON object it
// marshalled, the extras by fam's names. go-openai never writes these keys
// itself (Send leaves the corresponding go-openai fields zero), so no key
// is duplicated.
func extendBody(raw []byte, req *Request, fam *serverfamily.Family) ([]byte, error) {
	obj := bytes.TrimSpace(raw)
	if len(obj) < 2 || obj[0] != '{' || obj[len(obj)-1] != '}' {
		return nil, &protocolError{msg: "invalid request: go-openai did not marshal a JSON object"}
	}
	if math.IsNaN(req.Temperature) || math.IsInf(req.Temperature, 0) {
		return nil, &protocolError{msg: "invalid request: temperature must be a finite number"}
	}
	out := make([]byte, 0, len(obj)+160)
	out = append(out, obj[:len(obj)-1]...)
	if len(bytes.TrimSpace(obj[1:len(obj)-1])) > 0 {
		out = append(out, ',')
	}
	x := fam.Extras
	if (req.MinTokens > 0 && x.MinTokens == "") || (req.IgnoreEOS && x.IgnoreEOS == "") {
		return nil, &protocolError{msg: fmt.Sprintf("invalid request: %s servers take no min_tokens or ignore_eos (its server family names none): leave them out of the workload", fam.Name)}
	}
	out = append(out, `"stream_options":{"include_usage":true`...)
	if x.ContinuousUsage != "" {
		out = append(out, ',')
		out = strconv.AppendQuote(out, x.ContinuousUsage)
		out = append(out, `:true`...)
	}
	out = append(out, `},"temperature":`...)
	out = strconv.AppendFloat(out, req.Temperature, 'g', -1, 64)
	if req.MaxTokens > 0 {
		out = append(out, `,"max_tokens":`...)
		out = strconv.AppendInt(out, int64(req.MaxTokens), 10)
	}
	if req.MinTokens > 0 {
		out = append(out, ',')
		out = strconv.AppendQuote(out, x.MinTokens)
		out = append(out, ':')
		out = strconv.AppendInt(out, int64(req.MinTokens), 10)
	}
	if req.IgnoreEOS {
		out = append(out, ',')
		out = strconv.AppendQuote(out, x.IgnoreEOS)
		out = append(out, `:true`...)
	}
	out = appendStructured(out, req)
	out = append(out, '}')
	return out, nil
}
