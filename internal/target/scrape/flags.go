package scrape

import (
	"context"
	"net/url"
	"os"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/gateway"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// Flags are the flags of `vllmperf scrape`: where the exposition is read.
type Flags struct {
	URL       string
	File      string
	JSON      bool
	APIKeyEnv string
	Timeout   time.Duration
	// Gateway is how --url is reached behind a gateway: headers, CA and
	// client certificates (package gateway).
	Gateway gateway.Flags
}

// Snapshot checks the flags and reads the exposition they point at; a
// flag's error is a usage error (package exitstatus).
func (o *Flags) Snapshot(ctx context.Context) (*Snapshot, error) {
	opts, u, err := o.check()
	if err != nil {
		return nil, err
	}
	if o.File != "" {
		return ParseFile(o.File)
	}
	sc := NewScraper(u, opts...)
	defer sc.client.CloseIdleConnections()
	return sc.Scrape(ctx)
}

// check returns the scraper's options and URL for the flags.
func (o *Flags) check() ([]Option, string, error) {
	switch {
	case o.URL == "" && o.File == "":
		return nil, "", exitstatus.Usagef("say what to read: --url URL (a running server's /metrics) or --file FILE (a saved exposition)")
	case o.URL != "" && o.File != "":
		return nil, "", exitstatus.Usagef("--url and --file exclude each other: give one")
	case o.File != "" && o.APIKeyEnv != "":
		return nil, "", exitstatus.Usagef("--api-key-env goes with --url; a file needs no key")
	case o.File != "" && o.Gateway.Given():
		return nil, "", exitstatus.Usagef("--header, --ca-cert, --client-cert and --client-key go with --url; a file is read directly")
	case o.Timeout <= 0:
		return nil, "", exitstatus.Usagef("--timeout %v: want a positive duration such as 10s", o.Timeout)
	case o.File != "":
		return nil, "", nil
	}
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, "", exitstatus.Usagef("--url %q: want http://HOST:PORT/metrics, e.g. http://127.0.0.1:8000/metrics", o.URL)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/metrics"
	}
	g, err := o.Gateway.Gateway()
	if err != nil {
		return nil, "", exitstatus.Usage(err)
	}
	opts := []Option{WithTimeout(o.Timeout), WithHTTPClient(g.Client(1))}
	if o.APIKeyEnv != "" {
		key := os.Getenv(o.APIKeyEnv)
		if key == "" {
			return nil, "", exitstatus.Usagef("--api-key-env %s: that variable is empty or unset; export it, or drop the flag", o.APIKeyEnv)
		}
		opts = append(opts, WithAPIKey(key))
	}
	return opts, u.String(), nil
}
