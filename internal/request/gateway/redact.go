package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Redacted is what replaces a secret in text.
const Redacted = "[REDACTED]"

// secretForms are the ways a server may echo value: as sent, JSON-escaped
// (a header echoed in a JSON body, with and without HTML escapes),
// Go-quoted and URL-escaped, each once.
func secretForms(value string) []string {
	forms := []string{value}
	if b, err := json.Marshal(value); err == nil {
		forms = append(forms, string(b[1:len(b)-1]))
	}
	var plain bytes.Buffer // JSON without HTML escapes, as most servers write it
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	if enc.Encode(value) == nil {
		js := strings.TrimSuffix(plain.String(), "\n")
		forms = append(forms, js[1:len(js)-1])
	}
	q := strconv.Quote(value)
	forms = append(forms, q[1:len(q)-1], url.QueryEscape(value), url.PathEscape(value))
	var out []string
	for _, f := range forms {
		if f != "" && !containsString(out, f) {
			out = append(out, f)
		}
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// patterns are the byte forms of every header value, longest first (a
// value inside another is replaced after it).
func (g *Gateway) patterns() [][]byte {
	if g == nil {
		return nil
	}
	var pats [][]byte
	for _, h := range g.headers {
		for _, f := range secretForms(h.value) {
			pats = append(pats, []byte(f))
		}
	}
	for i := 1; i < len(pats); i++ { // insertion sort: a handful
		for j := i; j > 0 && len(pats[j]) > len(pats[j-1]); j-- {
			pats[j], pats[j-1] = pats[j-1], pats[j]
		}
	}
	return pats
}

// redactBytes replaces every pattern in b.
func redactBytes(b []byte, pats [][]byte) []byte {
	for _, p := range pats {
		if bytes.Contains(b, p) {
			b = bytes.ReplaceAll(b, p, []byte(Redacted))
		}
	}
	return b
}

// partialSuffix is the length of the longest end of b that begins some
// pattern without holding it whole: what must wait for the next read.
func partialSuffix(b []byte, pats [][]byte) int {
	longest := 0
	for _, p := range pats {
		for k := min(len(p)-1, len(b)); k > longest; k-- {
			if bytes.HasSuffix(b, p[:k]) {
				longest = k
				break
			}
		}
	}
	return longest
}

// redactingBody is a response body with every header value the gateway
// sent replaced as it is read, so that no echo of one reaches a message,
// a sample or a report. It holds back only an end that could begin a
// secret: an SSE event, which ends in a line break (no value holds one),
// is passed on as soon as it arrives.
type redactingBody struct {
	inner io.ReadCloser
	pats  [][]byte
	out   []byte // redacted, not yet returned
	hold  []byte // a possible start of a secret
	err   error  // the inner body's error, returned once out is drained
	chunk []byte // the inner body's read buffer
	buf   []byte // hold and the chunk read, before redaction
}

func newRedactingBody(body io.ReadCloser, pats [][]byte) *redactingBody {
	return &redactingBody{inner: body, pats: pats, chunk: make([]byte, 16<<10)}
}

// Read implements io.Reader.
func (r *redactingBody) Read(p []byte) (int, error) {
	for len(r.out) == 0 && r.err == nil {
		n, err := r.inner.Read(r.chunk)
		r.buf = append(append(r.buf[:0], r.hold...), r.chunk[:n]...)
		data := redactBytes(r.buf, r.pats)
		keep := 0
		if err == nil {
			keep = partialSuffix(data, r.pats)
		}
		r.out = append(r.out[:0], data[:len(data)-keep]...)
		r.hold = append(r.hold[:0], data[len(data)-keep:]...)
		r.err = err
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	if len(r.out) == 0 && r.err != nil {
		return n, r.err
	}
	return n, nil
}

// Close implements io.Closer.
func (r *redactingBody) Close() error { return r.inner.Close() }

// redactResponse replaces the header values in resp's status line,
// headers and body.
func redactResponse(resp *http.Response, pats [][]byte) {
	if len(pats) == 0 {
		return
	}
	resp.Status = string(redactBytes([]byte(resp.Status), pats))
	for name, values := range resp.Header {
		for i, v := range values {
			values[i] = string(redactBytes([]byte(v), pats))
		}
		resp.Header[name] = values
	}
	if resp.Body != nil && resp.Body != http.NoBody {
		resp.Body = newRedactingBody(resp.Body, pats)
	}
}

// ErrCrossOrigin is a redirect to another origin (scheme, host and
// port) than the request's: refused, so that the gateway's headers and
// the API key are sent only where the user pointed the run.
var ErrCrossOrigin = errors.New("redirect to another origin refused")

// checkRedirect follows a redirect within the first request's origin and
// refuses one to another, and more than 10 in a row (net/http's bound).
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	from := via[0].URL
	if origin(from) != origin(req.URL) {
		return fmt.Errorf("%w: %s answered a redirect to %s; give the final address as the target (or its metrics URL) instead", ErrCrossOrigin, origin(from), origin(req.URL))
	}
	return nil
}

// origin is scheme://host:port of u, the port made explicit.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}
