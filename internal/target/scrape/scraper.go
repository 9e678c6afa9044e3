package scrape

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
)

// DefaultTimeout bounds one scrape, from the GET to the end of the body.
// vLLM answers /metrics in milliseconds even under load; a scrape that takes
// seconds means the API server's event loop is stuck.
const DefaultTimeout = 10 * time.Second

// acceptHeader asks for the text format vLLM's prometheus_client serves.
const acceptHeader = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// Source yields snapshots of a server's metrics. *Scraper is the real one.
type Source interface {
	Scrape(ctx context.Context) (*Snapshot, error)
}

// Scraper reads one /metrics URL. It is safe for concurrent use.
type Scraper struct {
	url     string
	urlErr  error
	apiKey  string
	model   string
	fam     *serverfamily.Family
	timeout time.Duration
	client  *http.Client
	starts  startLog
}

// Option configures a Scraper.
type Option func(*Scraper)

// WithAPIKey sends key as a bearer token. vLLM's --api-key guards only
// /v1/*, but a proxy in front may guard /metrics too. The key never appears
// in errors.
func WithAPIKey(key string) Option { return func(s *Scraper) { s.apiKey = key } }

// WithTimeout bounds each scrape (default DefaultTimeout); d <= 0 leaves
// only the caller's context.
func WithTimeout(d time.Duration) Option { return func(s *Scraper) { s.timeout = d } }

// WithHTTPClient scrapes through hc instead of http.DefaultClient.
func WithHTTPClient(hc *http.Client) Option { return func(s *Scraper) { s.client = hc } }

// WithModel keeps only model's series where the server labels them by
// model_name (a server with several models, or LoRA adapters beside the
// base model); Snapshot.Models still lists every model seen.
func WithModel(model string) Option { return func(s *Scraper) { s.model = model } }

// WithFamily reads the exposition with fam's names (its prefix, its
// renames): a server of another family than serverfamily.Default.
func WithFamily(fam *serverfamily.Family) Option { return func(s *Scraper) { s.fam = fam } }

// NewScraper returns a scraper for metricsURL, the full URL of the metrics
// page (http://127.0.0.1:8000/metrics). A malformed URL does not panic:
// every Scrape fails with it.
func NewScraper(metricsURL string, opts ...Option) *Scraper {
	s := &Scraper{url: metricsURL, timeout: DefaultTimeout, client: http.DefaultClient}
	for _, o := range opts {
		o(s)
	}
	const example = "want an http:// or https:// URL such as http://127.0.0.1:8000/metrics"
	u, err := url.Parse(metricsURL)
	switch {
	case err != nil:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		s.urlErr = fmt.Errorf("not a URL (%v); %s", err, example)
	case u.Scheme != "http" && u.Scheme != "https":
		s.urlErr = errors.New(example)
	case u.Host == "":
		s.urlErr = errors.New("the URL has no host; " + example)
	}
	return s
}

// URL returns the URL scraped.
func (s *Scraper) URL() string { return s.url }

// FetchError is a scrape that got no exposition: the URL could not be
// reached, answered a non-2xx status, timed out or sent something other
// than the text format. It names the URL.
type FetchError struct {
	URL    string
	Status int    // HTTP status, 0 when none arrived
	Body   string // start of the body of a non-2xx answer
	Err    error
}

func (e *FetchError) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "scrape %s: ", e.URL)
	if e.Status != 0 {
		fmt.Fprintf(&sb, "HTTP %d %s", e.Status, http.StatusText(e.Status))
		if e.Body != "" {
			fmt.Fprintf(&sb, ": %q", e.Body)
		}
		switch e.Status {
		case http.StatusNotFound:
			sb.WriteString(" (vLLM serves its metrics at /metrics on the API port; check the URL's path and port)")
		case http.StatusUnauthorized, http.StatusForbidden:
			sb.WriteString(" (the endpoint wants credentials: pass the key with --api-key-env / WithAPIKey)")
		}
		return sb.String()
	}
	sb.WriteString(e.Err.Error())
	return sb.String()
}

func (e *FetchError) Unwrap() error { return e.Err }

// errTimeout is the cause of a scrape cut by the Scraper's own timeout.
var errTimeout = errors.New("scrape timeout")

// Scrape GETs the metrics page and parses it. Errors are *FetchError or
// *ParseError; both name the URL.
func (s *Scraper) Scrape(ctx context.Context) (*Snapshot, error) {
	snap, err := scrapeWith(ctx, s, func(r io.Reader, source string, at time.Time) (*Snapshot, error) {
		return parseModel(s.fam, r, source, at, s.model)
	})
	if err == nil {
		s.starts.add(snap.ProcessStart)
	}
	return snap, err
}

// Gauges GETs the page and returns every family's series by exposed name,
// whatever its prefix (an exporter that is not vLLM: dcgm-exporter).
func (s *Scraper) Gauges(ctx context.Context) (*Families, error) {
	return scrapeWith(ctx, s, ParseFamilies)
}

// scrapeWith GETs the page and reads it with parse.
func scrapeWith[T any](ctx context.Context, s *Scraper, parse func(io.Reader, string, time.Time) (*T, error)) (*T, error) {
	if s.urlErr != nil {
		return nil, &FetchError{URL: s.url, Err: s.urlErr}
	}
	if s.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, s.timeout, errTimeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, &FetchError{URL: s.url, Err: err}
	}
	req.Header.Set("Accept", acceptHeader)
	if s.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+s.apiKey)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, &FetchError{URL: s.url, Err: s.describe(ctx, err)}
	}
	defer resp.Body.Close()
	at := time.Now()
	if resp.StatusCode/100 != 2 {
		return nil, &FetchError{URL: s.url, Status: resp.StatusCode, Body: s.errorBody(resp.Body)}
	}
	switch expfmt.ResponseFormat(resp.Header).FormatType() {
	case expfmt.TypeProtoDelim, expfmt.TypeProtoText, expfmt.TypeProtoCompact, expfmt.TypeOpenMetrics:
		return nil, &FetchError{URL: s.url, Err: fmt.Errorf("answered Content-Type %q; vllmperf reads the Prometheus text format (text/plain; version=0.0.4) that vLLM serves",
			resp.Header.Get("Content-Type"))}
	}
	snap, err := parse(resp.Body, s.url, at)
	if err == nil {
		return snap, nil
	}
	var pe *ParseError
	if ctx.Err() != nil || !errors.As(err, &pe) {
		// The body broke off: a transport error, not bad text.
		return nil, &FetchError{URL: s.url, Err: s.describe(ctx, err)}
	}
	return nil, err
}

// maxErrorBody bounds the start of a refusal's body kept in a FetchError.
const maxErrorBody = 200

// errorBody is the start of a non-2xx answer's body with the API key
// replaced: read past the bound by the key's length and redacted before
// it is cut, so that no part of an echoed key shows.
func (s *Scraper) errorBody(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, int64(maxErrorBody+len(s.apiKey))))
	text := string(b)
	if s.apiKey != "" {
		text = strings.ReplaceAll(text, s.apiKey, "[REDACTED]")
	}
	if text = strings.TrimSpace(text); len(text) > maxErrorBody {
		text = text[:maxErrorBody]
	}
	return text
}

// describe words a transport error, naming timeouts as such.
func (s *Scraper) describe(ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), errTimeout) {
		return fmt.Errorf("no complete answer within %v (timeout): %w", s.timeout, context.DeadlineExceeded)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%w", context.Cause(ctx))
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err // the URL is in FetchError already
	}
	return err
}
