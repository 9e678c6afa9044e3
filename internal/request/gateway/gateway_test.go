package gateway

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// env is a lookup over a map.
func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// TestParseHeader: curl's 'Name: value', and the names a gateway header
// cannot take.
func TestParseHeader(t *testing.T) {
	for _, tc := range []struct {
		text    string
		want    Header
		wantErr string
	}{
		// The name is canonicalised, the value trimmed.
		{"x-api-key:  abc ", Header{"X-Api-Key", "abc"}, ""},
		// A value with colons keeps them.
		{"X-Route: a:b:c", Header{"X-Route", "a:b:c"}, ""},
		// A value from a variable is kept as written until Load.
		{"x-api-key: env:KEY", Header{"X-Api-Key", "env:KEY"}, ""},
		// No colon: the value is not echoed.
		{"x-api-key", Header{}, `--header "[REDACTED]": want 'Name: value'`},
		// No colon, a value pasted alone (issue 50): not echoed either.
		{"s3cr3t", Header{}, `--header "[REDACTED]": want 'Name: value'`},
		// No name.
		{": v", Header{}, `--header ": [REDACTED]": want 'Name: value'`},
		// Not a token.
		{"a b: v", Header{}, `header name "a b" is not an HTTP token`},
		// The transport's own.
		{"content-length: 3", Header{}, "header Content-Length is set by the transport itself"},
	} {
		got, err := ParseHeader(tc.text, "--header")
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseHeader(%q) error = %v, want %q", tc.text, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseHeader(%q) = %+v, %v; want %+v", tc.text, got, err, tc.want)
		}
	}
}

// TestLoadHeaders: values read from variables, a later header winning
// over an earlier one of the same name, and errors that name the source
// and never the value.
func TestLoadHeaders(t *testing.T) {
	lookup := env(map[string]string{"KEY": "s3cr3t-value", "EMPTY": " "})
	c := Config{Headers: []Header{{"X-Api-Key", "env:KEY"}, {"X-Route", "a"}, {"X-Route", "b"}}}
	g, err := c.Load(lookup)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(g.headers), "[{X-Api-Key s3cr3t-value} {X-Route b}]"; got != want {
		t.Errorf("headers = %s, want %s", got, want)
	}
	for _, s := range []string{g.String(), fmt.Sprintf("%v %+v %#v", g, g, g), fmt.Sprint(g.Names())} {
		if strings.Contains(s, "s3cr3t") {
			t.Errorf("a header value is printed: %s", s)
		}
	}
	if got := g.Redact("echo s3cr3t-value"); got != "echo [REDACTED]" {
		t.Errorf("Redact = %q", got)
	}
	for _, tc := range []struct {
		h    Header
		want string
	}{
		{Header{"X-Api-Key", "env:EMPTY"}, "VLLMPERF_HEADERS X-Api-Key: $EMPTY is empty or unset"},
		{Header{"X-Api-Key", "env:"}, `"env:" names no variable`},
		{Header{"X-Api-Key", "a\nb"}, "holds a line break"},
		{Header{"X-Api-Key", ""}, "VLLMPERF_HEADERS X-Api-Key: the value is empty"},
	} {
		_, err := Config{Headers: []Header{tc.h}, HeaderFrom: []string{EnvHeaders}}.Load(lookup)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%q) error = %v, want %q", tc.h.Value, err, tc.want)
		}
	}
}

// TestOverridesOverEnvironment: a header given adds to VLLMPERF_HEADERS
// and wins for a name both give.
func TestOverridesOverEnvironment(t *testing.T) {
	lookup := env(map[string]string{EnvHeaders: "X-Route: env-route\nX-Team: infra\n\n"})
	g, err := (&Overrides{Headers: []string{"x-route: flag-route"}}).load(lookup)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(g.headers), "[{X-Team infra} {X-Route flag-route}]"; got != want {
		t.Errorf("headers = %s, want %s", got, want)
	}
}

// TestClientSendsHeaders: every request through Client carries the
// headers, the caller's request is left as it was, and
// CloseIdleConnections reaches the transport.
func TestClientSendsHeaders(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("X-Api-Key")+"|"+r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	g, err := Config{Headers: []Header{{"X-Api-Key", "k1"}}}.Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	hc := g.Client(4)
	defer hc.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Authorization", "Bearer vllm-key")
	for range 2 {
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if want := "k1|Bearer vllm-key"; len(got) != 2 || got[0] != want || got[1] != want {
		t.Errorf("server saw %q, want twice %q", got, want)
	}
	if req.Header.Get("X-Api-Key") != "" {
		t.Error("the caller's request was changed")
	}
	if _, ok := hc.Transport.(interface{ CloseIdleConnections() }); !ok {
		t.Error("the transport does not pass CloseIdleConnections on")
	}
}

// TestProxyRule: loopback is always direct; any other host follows the
// environment's rule (net/http's: HTTPS_PROXY, HTTP_PROXY, NO_PROXY).
func TestProxyRule(t *testing.T) {
	proxy, _ := url.Parse("http://proxy.example:3128")
	asked := 0
	rule := proxyWith(func(*http.Request) (*url.URL, error) { asked++; return proxy, nil })
	for _, tc := range []struct {
		url    string
		direct bool
	}{
		{"http://127.0.0.1:8000/v1/models", true},    // loopback address
		{"http://127.3.4.5:8000/metrics", true},      // all of 127.0.0.0/8
		{"https://[::1]:8443/health", true},          // IPv6 loopback
		{"http://localhost:8000/metrics", true},      // the name
		{"http://vllm.localhost/metrics", true},      // RFC 6761
		{"https://gateway.example/v1/models", false}, // the environment's rule
		{"http://vllm-0.vllm:8000/metrics", false},   // a cluster name is not loopback
	} {
		req, _ := http.NewRequest(http.MethodGet, tc.url, nil)
		before := asked
		got, err := rule(req)
		if err != nil {
			t.Fatal(err)
		}
		if direct := got == nil && asked == before; direct != tc.direct {
			t.Errorf("%s: direct = %v, want %v", tc.url, direct, tc.direct)
		}
	}
	if tr := (*Gateway)(nil).Client(1).Transport.(*http.Transport); tr.Proxy == nil {
		t.Error("the transport has no proxy rule: it would ignore HTTPS_PROXY")
	}
}

// TestLoopbackDirectUnderProxy: with HTTP_PROXY and HTTPS_PROXY pointing
// at a proxy that does not exist, a server on loopback is still reached,
// directly.
func TestLoopbackDirectUnderProxy(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:1")
	t.Setenv("NO_PROXY", "")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer srv.Close()
	hc := (*Gateway)(nil).Client(1)
	defer hc.CloseIdleConnections()
	for _, u := range []string{srv.URL, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)} {
		resp, err := hc.Get(u)
		if err != nil {
			t.Fatalf("GET %s under a proxy setting: %v", u, err)
		}
		resp.Body.Close()
	}
}
