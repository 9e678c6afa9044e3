package cliflags

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/gateway"
	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// ScrapeFlags are the flags of `vllmperf scrape`: where the exposition
// is read.
type ScrapeFlags struct {
	URL       string
	File      string
	JSON      bool
	APIKeyEnv string
	Timeout   time.Duration
	// Gateway is how --url is reached behind a gateway: headers, CA and
	// client certificates (package gateway).
	Gateway gateway.Overrides
}

// Snapshot checks the flags and reads the exposition they point at; a
// flag's error is a usage error (package exitstatus).
func (o *ScrapeFlags) Snapshot(ctx context.Context) (*scrape.Snapshot, error) {
	opts, u, hc, err := o.check()
	if err != nil {
		return nil, err
	}
	if o.File != "" {
		return scrape.ParseFile(o.File)
	}
	defer hc.CloseIdleConnections()
	return scrape.NewScraper(u, opts...).Scrape(ctx)
}

// check returns the scraper's options, URL and HTTP client for the flags.
func (o *ScrapeFlags) check() ([]scrape.Option, string, *http.Client, error) {
	switch {
	case o.URL == "" && o.File == "":
		return nil, "", nil, exitstatus.Usagef("say what to read: --url URL (a running server's /metrics) or --file FILE (a saved exposition)")
	case o.URL != "" && o.File != "":
		return nil, "", nil, exitstatus.Usagef("--url and --file exclude each other: give one")
	case o.File != "" && o.APIKeyEnv != "":
		return nil, "", nil, exitstatus.Usagef("--api-key-env goes with --url; a file needs no key")
	case o.File != "" && o.Gateway.Given():
		return nil, "", nil, exitstatus.Usagef("--header, --ca-cert, --client-cert and --client-key go with --url; a file is read directly")
	case o.Timeout <= 0:
		return nil, "", nil, exitstatus.Usagef("--timeout %v: want a positive duration such as 10s", o.Timeout)
	case o.File != "":
		return nil, "", nil, nil
	}
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, "", nil, exitstatus.Usagef("--url %q: want http://HOST:PORT/metrics, e.g. http://127.0.0.1:8000/metrics", o.URL)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/metrics"
	}
	g, err := o.Gateway.Gateway()
	if err != nil {
		return nil, "", nil, exitstatus.Usage(err)
	}
	hc := g.Client(1)
	opts := []scrape.Option{scrape.WithTimeout(o.Timeout), scrape.WithHTTPClient(hc)}
	if o.APIKeyEnv != "" {
		key := os.Getenv(o.APIKeyEnv)
		if key == "" {
			return nil, "", nil, exitstatus.Usagef("--api-key-env %s: that variable is empty or unset; export it, or drop the flag", o.APIKeyEnv)
		}
		opts = append(opts, scrape.WithAPIKey(key))
	}
	return opts, u.String(), hc, nil
}
