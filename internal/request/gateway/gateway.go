// Package gateway is how the suite reaches a server: the one HTTP
// transport of completions, /v1/models, /tokenize, /health and /metrics
// scrapes, with what a gateway in front of a deployment asks for: extra
// request headers (an x-api-key, a routing header), a CA certificate for a
// self-signed TLS endpoint, and a client certificate (mTLS).
//
// Every request of a run goes through Gateway.Client, so the same proxy
// rule holds for all of them: the environment's (HTTPS_PROXY, HTTP_PROXY,
// NO_PROXY, as net/http reads them), with loopback always direct.
//
// Header values are secrets: they are never printed (String names the
// headers only), and a value can be read from an environment variable
// ("Name: env:VAR") so that it is on no command line either.
package gateway

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"
)

// Defaults of the transport Client builds.
const (
	// DialTimeout bounds TCP connection set-up.
	DialTimeout = 10 * time.Second
	// TLSHandshakeTimeout bounds a TLS handshake.
	TLSHandshakeTimeout = 10 * time.Second
	// IdleConnTimeout is how long an idle keep-alive connection is kept.
	IdleConnTimeout = 90 * time.Second
)

// EnvPrefix starts a header value read from an environment variable:
// "x-api-key: env:GATEWAY_KEY" sends $GATEWAY_KEY.
const EnvPrefix = "env:"

// Header is one extra request header.
type Header struct {
	Name  string
	Value string // the value itself, or EnvPrefix and a variable's name
}

// Config says how to reach a gateway: headers and certificate files, each
// with where it was given (a flag or a variable) so that errors name it.
type Config struct {
	Headers    []Header
	HeaderFrom []string // where Headers[i] came from: a flag, "VLLMPERF_HEADERS"
	CACert     Source
	ClientCert Source
	ClientKey  Source
}

// Source is a setting's value and where it came from.
type Source struct {
	Value string
	From  string // a flag, "VLLMPERF_CA_CERT"
}

// Gateway is a checked Config: headers resolved, certificates loaded. The
// nil *Gateway is valid: plain HTTP(S) with the system's roots and no
// extra headers.
type Gateway struct {
	headers []resolved
	tls     *tls.Config // nil: Go's defaults
}

// resolved is a header with its value read.
type resolved struct {
	name, value string
}

// forbidden are headers the transport sets itself; a gateway header may not.
var forbidden = []string{"Host", "Content-Length", "Transfer-Encoding", "Connection", "Upgrade", "Te", "Trailer", "Keep-Alive", "Proxy-Connection"}

// ParseHeader parses "Name: value" (curl's -H form). from names where the
// text came from, for the error.
func ParseHeader(text, from string) (Header, error) {
	name, value, ok := strings.Cut(text, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	switch {
	case !ok || name == "":
		return Header{}, fmt.Errorf("%s %q: want 'Name: value', e.g. 'x-api-key: env:GATEWAY_KEY' (the value read from $GATEWAY_KEY)", from, redactValue(text))
	case !validName(name):
		return Header{}, fmt.Errorf("%s: header name %q is not an HTTP token (letters, digits and !#$%%&'*+-.^_`|~ only)", from, name)
	case slices.ContainsFunc(forbidden, func(f string) bool { return strings.EqualFold(f, name) }):
		return Header{}, fmt.Errorf("%s: header %s is set by the transport itself and cannot be given (the target URL sets Host)", from, http.CanonicalHeaderKey(name))
	}
	return Header{Name: http.CanonicalHeaderKey(name), Value: value}, nil
}

// redactValue keeps the name of a "Name: value" text and hides the rest.
func redactValue(text string) string {
	if name, _, ok := strings.Cut(text, ":"); ok {
		return name + ": [REDACTED]"
	}
	return "[REDACTED]" // no colon: the whole text may be the value
}

// validName reports whether s is an RFC 9110 token.
func validName(s string) bool {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("!#$%&'*+-.^_`|~", r):
		default:
			return false
		}
	}
	return s != ""
}

// Load checks c: reads header values from their variables (lookup, as
// os.LookupEnv), the CA certificate and the client key pair. Each error
// names the flag or variable and the fix; none shows a header's value.
func (c Config) Load(lookup func(string) (string, bool)) (*Gateway, error) {
	g := &Gateway{}
	for i, h := range c.Headers {
		from := "header"
		if i < len(c.HeaderFrom) {
			from = c.HeaderFrom[i]
		}
		v := h.Value
		if name, ok := strings.CutPrefix(v, EnvPrefix); ok {
			name = strings.TrimSpace(name)
			if name == "" {
				return nil, fmt.Errorf("%s %s: %q names no variable; write %sVAR", from, h.Name, v, EnvPrefix)
			}
			val, _ := lookup(name)
			if v = strings.TrimSpace(val); v == "" {
				return nil, fmt.Errorf("%s %s: $%s is empty or unset; export it (the header's value is read from it)", from, h.Name, name)
			}
		}
		if v == "" {
			return nil, fmt.Errorf("%s %s: the value is empty; give one, or %sVAR to read it from a variable", from, h.Name, EnvPrefix)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return nil, fmt.Errorf("%s %s: the value holds a line break or NUL, which HTTP does not allow", from, h.Name)
		}
		g.headers = slices.DeleteFunc(g.headers, func(r resolved) bool { return r.name == h.Name }) // a later one wins
		g.headers = append(g.headers, resolved{name: h.Name, value: v})
	}
	if err := g.loadTLS(c); err != nil {
		return nil, err
	}
	return g, nil
}

// loadTLS builds the TLS configuration of c's certificates, if any.
func (g *Gateway) loadTLS(c Config) error {
	if c.CACert.Value == "" && c.ClientCert.Value == "" && c.ClientKey.Value == "" {
		return nil
	}
	g.tls = &tls.Config{MinVersion: tls.VersionTLS12}
	if f := c.CACert; f.Value != "" {
		pem, err := os.ReadFile(f.Value)
		if err != nil {
			return fmt.Errorf("%s: %w", f.From, err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("%s %s: no PEM certificate in the file; want the CA's certificate, -----BEGIN CERTIFICATE-----", f.From, f.Value)
		}
		g.tls.RootCAs = pool
	}
	cert, key := c.ClientCert, c.ClientKey
	switch {
	case cert.Value == "" && key.Value == "":
		return nil
	case cert.Value == "":
		return fmt.Errorf("%s needs the certificate it belongs to: give --client-cert (or VLLMPERF_CLIENT_CERT) too", key.From)
	case key.Value == "":
		return fmt.Errorf("%s needs its private key: give --client-key (or VLLMPERF_CLIENT_KEY) too", cert.From)
	}
	pair, err := tls.LoadX509KeyPair(cert.Value, key.Value)
	if err != nil {
		return fmt.Errorf("%s %s with %s %s: %w", cert.From, cert.Value, key.From, key.Value, err)
	}
	g.tls.Certificates = []tls.Certificate{pair}
	return nil
}

// Client returns an HTTP client for the gateway whose pool keeps maxConns
// connections (n < 1 is taken as 1): the one place an HTTP client of a run
// is built. No compression (a gzipped SSE stream is buffered), no client
// timeout (a stream lasts as long as it lasts: callers bound requests with
// their context), the proxy rule of Proxy, and the gateway's TLS settings
// and headers.
func (g *Gateway) Client(maxConns int) *http.Client {
	maxConns = max(maxConns, 1)
	t := &http.Transport{
		Proxy: Proxy,
		DialContext: (&net.Dialer{
			Timeout:   DialTimeout,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		TLSHandshakeTimeout:   TLSHandshakeTimeout,
		MaxIdleConns:          maxConns,
		MaxIdleConnsPerHost:   maxConns,
		MaxConnsPerHost:       0, // never make a stream wait for a connection
		IdleConnTimeout:       IdleConnTimeout,
		DisableCompression:    true,
		ForceAttemptHTTP2:     false,
		ExpectContinueTimeout: 0,
		// Requests are written once; a small write buffer saves 3 KiB per
		// connection (large prompts bypass it).
		WriteBufferSize: 1 << 10,
	}
	if g != nil && g.tls != nil {
		t.TLSClientConfig = g.tls.Clone()
	}
	if g == nil || len(g.headers) == 0 {
		return &http.Client{Transport: t, CheckRedirect: checkRedirect}
	}
	return &http.Client{Transport: &withHeaders{inner: t, headers: g.headers, pats: g.patterns()}, CheckRedirect: checkRedirect}
}

// Names lists the extra headers' names, never their values.
func (g *Gateway) Names() []string {
	if g == nil {
		return nil
	}
	var names []string
	for _, h := range g.headers {
		names = append(names, h.name)
	}
	return names
}

// Direct reports whether g adds nothing to a plain connection: no
// header, no certificate.
func (g *Gateway) Direct() bool { return g == nil || (len(g.headers) == 0 && g.tls == nil) }

// String describes the gateway without a secret: the headers' names and
// whether certificates are set; "direct" when it adds nothing.
func (g *Gateway) String() string {
	if g.Direct() {
		return "direct"
	}
	var parts []string
	if len(g.headers) > 0 {
		parts = append(parts, "headers "+strings.Join(g.Names(), ", ")+" (values hidden)")
	}
	if g.tls != nil && g.tls.RootCAs != nil {
		parts = append(parts, "CA certificate")
	}
	if g.tls != nil && len(g.tls.Certificates) > 0 {
		parts = append(parts, "client certificate")
	}
	return strings.Join(parts, ", ")
}

// GoString is String: %#v shows no secret either.
func (g *Gateway) GoString() string { return g.String() }

// Redact replaces every header value in text with [REDACTED], as sent,
// JSON-escaped or URL-escaped.
func (g *Gateway) Redact(text string) string {
	if g == nil || len(g.headers) == 0 {
		return text
	}
	return string(redactBytes([]byte(text), g.patterns()))
}

// Proxy is the proxy rule of every request: the environment's
// (http.ProxyFromEnvironment: HTTPS_PROXY, HTTP_PROXY, NO_PROXY), except
// that a loopback host (127.0.0.0/8, ::1, localhost) is always reached
// directly: a server on this machine is measured, not a proxy in front of
// it.
func Proxy(req *http.Request) (*url.URL, error) {
	return proxyWith(http.ProxyFromEnvironment)(req)
}

// proxyWith is Proxy over env, the environment's rule.
func proxyWith(env func(*http.Request) (*url.URL, error)) func(*http.Request) (*url.URL, error) {
	return func(req *http.Request) (*url.URL, error) {
		if IsLoopback(req.URL.Hostname()) {
			return nil, nil
		}
		return env(req)
	}
}

// IsLoopback reports whether host (no port) is a loopback name or address.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// withHeaders adds the gateway's headers to every request and removes
// every echo of them from the answers.
type withHeaders struct {
	inner   *http.Transport
	headers []resolved
	pats    [][]byte // the values' forms (Gateway.patterns)
}

// RoundTrip implements http.RoundTripper: the request is cloned (a
// RoundTripper must not change its argument) with the headers set, and
// the answer's status, headers and body have the values replaced.
func (w *withHeaders) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	for _, h := range w.headers {
		r.Header.Set(h.name, h.value)
	}
	resp, err := w.inner.RoundTrip(r)
	if err != nil {
		return nil, err // a transport error: it holds no header value
	}
	redactResponse(resp, w.pats)
	return resp, nil
}

// CloseIdleConnections closes the transport's idle connections
// (http.Client.CloseIdleConnections reaches it through this method).
func (w *withHeaders) CloseIdleConnections() { w.inner.CloseIdleConnections() }
