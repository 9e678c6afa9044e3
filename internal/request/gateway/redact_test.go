package gateway

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
)

// echoGateway is a gateway that sends X-Gw-Token: tok<en>&"x".
func echoGateway(t *testing.T) *Gateway {
	t.Helper()
	g, err := Config{Headers: []Header{{Name: "X-Gw-Token", Value: "env:GWTOKEN"}}}.Load(func(string) (string, bool) { return `tok<en>&"x"`, true })
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestRedactingBody: every form of a secret is replaced wherever the
// reads cut it, and a body without one is passed on unchanged.
func TestRedactingBody(t *testing.T) {
	g := echoGateway(t)
	const secret = `tok<en>&"x"`
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"a " + secret + " b", "a [REDACTED] b"},
		{`{"h":"tok\u003cen\u003e\u0026\"x\""}`, `{"h":"[REDACTED]"}`},
		{"q=tok%3Cen%3E%26%22x%22", "q=[REDACTED]"},
		{secret + secret, "[REDACTED][REDACTED]"},
		{"ends in a start tok<e", "ends in a start tok<e"},
		{"data: {}\n\n", "data: {}\n\n"},
	}
	for _, tt := range tests {
		for name, wrap := range map[string]func(io.Reader) io.Reader{"whole": func(r io.Reader) io.Reader { return r }, "byte by byte": iotest.OneByteReader} {
			t.Run(fmt.Sprintf("%s/%s", tt.in, name), func(t *testing.T) {
				body := newRedactingBody(io.NopCloser(wrap(strings.NewReader(tt.in))), g.patterns())
				got, err := io.ReadAll(body)
				if err != nil || string(got) != tt.want {
					t.Errorf("read %q, %v; want %q", got, err, tt.want)
				}
			})
		}
	}
}

// TestRedactingBodyPassesEvents: an SSE event is returned as soon as it
// is read, not held for the next one.
func TestRedactingBodyPassesEvents(t *testing.T) {
	pr, pw := io.Pipe()
	body := newRedactingBody(pr, echoGateway(t).patterns())
	go func() { _, _ = pw.Write([]byte("data: {\"x\":1}\n\n")) }() // then nothing until closed
	buf := make([]byte, 64)
	n, err := body.Read(buf)
	if err != nil || string(buf[:n]) != "data: {\"x\":1}\n\n" {
		t.Errorf("first read %q, %v; want the whole event", buf[:n], err)
	}
	_ = pw.Close()
}

// TestClientNeverLeaksHeaders: an answer that echoes the request's
// headers (status, headers, body) reaches the caller without the value,
// and a redirect to another origin is refused before the header is sent
// there, while one within the origin is followed.
func TestClientNeverLeaksHeaders(t *testing.T) {
	g := echoGateway(t)
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Gw-Token") != "" {
			elsewhere.Add(1)
		}
	}))
	defer other.Close()
	var target *httptest.Server
	target = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/x", http.StatusTemporaryRedirect)
		case "/here":
			http.Redirect(w, r, target.URL+"/echo", http.StatusTemporaryRedirect)
		default:
			v := r.Header.Get("X-Gw-Token")
			w.Header().Set("X-Echo", v)
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "you sent %s (%q)", v, v)
		}
	}))
	defer target.Close()
	c := g.Client(1)
	for _, path := range []string{"/echo", "/here"} {
		resp, err := c.Get(target.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		all := string(body) + resp.Header.Get("X-Echo")
		if strings.Contains(all, "tok") || !strings.Contains(all, Redacted) {
			t.Errorf("%s: answer %q: the value or its escaped form shows", path, all)
		}
	}
	_, err := c.Get(target.URL + "/away")
	if !errors.Is(err, ErrCrossOrigin) {
		t.Errorf("redirect to another origin: error %v, want ErrCrossOrigin", err)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the other origin received the header %d times", n)
	}
}
