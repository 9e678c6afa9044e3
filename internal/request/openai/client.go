package openai

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/vllmperf/vllmperf/internal/request/gateway"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
)

// Defaults used by New when no option overrides them.
const (
	// DefaultRequestTimeout bounds one whole request, from the POST to the
	// end of the stream. Long generations under heavy load can take minutes.
	DefaultRequestTimeout = 10 * time.Minute
	// DefaultIdleTimeout is the longest gap allowed between stream events
	// (the response headers and each SSE message). It includes the wait for
	// the first event, which under overload is queueing plus prefill: raise
	// it for runs that deliberately overload the server.
	DefaultIdleTimeout = 60 * time.Second
	// DefaultMaxConnections is how many concurrent streams the default
	// transport keeps connections for without churn. It matches vLLM's
	// default --max-num-seqs on large GPUs.
	DefaultMaxConnections = 1024
	// DefaultMaxEventSize bounds one line of a response stream (an SSE event,
	// as vLLM sends them), and all its non-data lines together. A benchmark
	// request's events are well under 1 KiB; the cap keeps a server that
	// streams an endless line from taking the client's memory with it.
	DefaultMaxEventSize = 4 << 20
)

// Client sends benchmark requests to one OpenAI-compatible server and
// measures them. It is safe for concurrent use.
type Client struct {
	baseURL        string // normalised, ends in /v1
	baseErr        error  // set when baseURL is unusable; every Send fails with it
	apiKey         string
	httpClient     *http.Client
	gateway        *gateway.Gateway
	requestTimeout time.Duration
	idleTimeout    time.Duration
	maxConns       int
	maxEvent       int
	family         *serverfamily.Family
	oa             *goopenai.Client
}

// Option configures a Client.
type Option func(*Client)

// WithAPIKey sends key as a bearer token (vLLM's --api-key). The key never
// appears in error messages.
func WithAPIKey(key string) Option {
	return func(c *Client) { c.apiKey = key }
}

// WithHTTPClient makes the client send through hc instead of its own
// transport. hc is used as is: WithMaxConnections has no effect, and a
// non-zero hc.Timeout cuts streams that run longer than it.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) { c.httpClient = hc }
}

// WithGateway sends through the gateway's transport (package gateway:
// extra headers, CA and client certificates, the proxy rule) instead of a
// direct one. WithHTTPClient, when given too, wins.
func WithGateway(g *gateway.Gateway) Option {
	return func(c *Client) { c.gateway = g }
}

// WithRequestTimeout bounds each whole request (default
// DefaultRequestTimeout); d <= 0 disables the bound.
func WithRequestTimeout(d time.Duration) Option {
	return func(c *Client) { c.requestTimeout = d }
}

// WithIdleTimeout sets the longest gap allowed between stream events
// (default DefaultIdleTimeout): a stall past it fails the request with
// sample.ErrTimeout. d <= 0 disables the check.
func WithIdleTimeout(d time.Duration) Option {
	return func(c *Client) { c.idleTimeout = d }
}

// WithMaxConnections sizes the default transport so that n concurrent
// streams to the server never wait for, or churn, connections (default
// DefaultMaxConnections). Go's default of 2 idle connections per host would
// close and re-dial connections between requests at any concurrency above 2.
// n < 1 is treated as 1.
func WithMaxConnections(n int) Option {
	return func(c *Client) {
		if n < 1 {
			n = 1
		}
		c.maxConns = n
	}
}

// WithMaxEventSize caps the bytes of one line of a response stream, and of
// all its non-data lines together (default DefaultMaxEventSize): a stream
// past the cap fails the request with sample.ErrProtocol, "SSE event exceeds
// N MiB", before more of it is read. n <= 0 removes the cap, and with it the
// bound on the memory a stream can take.
func WithMaxEventSize(n int) Option {
	return func(c *Client) { c.maxEvent = n }
}

// WithFamily names the request extras with fam's field names (default
// serverfamily.Default, vLLM's min_tokens, ignore_eos and
// continuous_usage_stats); a request that needs an extra fam does not take
// fails as a protocol error naming it.
func WithFamily(fam *serverfamily.Family) Option {
	return func(c *Client) { c.family = fam }
}

// New returns a client for the server at baseURL, such as
// http://127.0.0.1:8000; a trailing /v1 is optional. A malformed baseURL
// does not panic: every Send then fails with sample.ErrConnection.
func New(baseURL string, opts ...Option) *Client {
	c := &Client{
		requestTimeout: DefaultRequestTimeout,
		idleTimeout:    DefaultIdleTimeout,
		maxConns:       DefaultMaxConnections,
		maxEvent:       DefaultMaxEventSize,
	}
	for _, o := range opts {
		o(c)
	}
	c.baseURL, c.baseErr = normaliseBaseURL(baseURL)
	if c.httpClient == nil {
		// The run's one transport (gateway.Client): no compression, an idle
		// pool as large as the connection count, the environment's proxy
		// for remote hosts and none for loopback.
		c.httpClient = c.gateway.Client(c.maxConns)
	}
	cfg := goopenai.DefaultConfig(c.apiKey)
	cfg.BaseURL = c.baseURL
	cfg.HTTPClient = &doer{inner: c.httpClient, apiKey: c.apiKey, maxEvent: c.maxEvent, family: serverfamily.OrDefault(c.family)}
	c.oa = goopenai.NewClientWithConfig(cfg)
	return c
}

// normaliseBaseURL checks u and returns it with exactly one trailing /v1.
func normaliseBaseURL(u string) (string, error) {
	u = strings.TrimSpace(u)
	p, err := url.Parse(u)
	if err != nil {
		return "", err
	}
	if p.Scheme != "http" && p.Scheme != "https" {
		return "", &url.Error{Op: "parse", URL: u, Err: errScheme}
	}
	if p.Host == "" {
		return "", &url.Error{Op: "parse", URL: u, Err: errNoHost}
	}
	u = strings.TrimRight(u, "/")
	if !strings.HasSuffix(u, "/v1") {
		u += "/v1"
	}
	return u, nil
}

// CloseIdleConnections closes the client's idle keep-alive connections (call
// it when a run ends; in-flight streams are not affected).
func (c *Client) CloseIdleConnections() {
	c.httpClient.CloseIdleConnections()
}
