package scrape

import (
	"fmt"
	"io"
	"net/http"
)

// MaxQueryBytes bounds one answer of the Prometheus HTTP API (a few
// series of a deployment are kilobytes): client_golang reads an answer
// whole, so the transport cuts one that runs past this.
const MaxQueryBytes = MaxExpositionBytes

// boundedClient is hc with every response body cut at limit: a read past
// it fails, naming the bound.
func boundedClient(hc *http.Client, limit int64) *http.Client {
	c := *hc
	inner := c.Transport
	if inner == nil {
		inner = http.DefaultTransport
	}
	c.Transport = boundedTransport{inner: inner, limit: limit}
	return &c
}

// boundedTransport wraps each response body in a boundedBody.
type boundedTransport struct {
	inner http.RoundTripper
	limit int64
}

// RoundTrip implements http.RoundTripper.
func (b boundedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.inner.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &boundedBody{ReadCloser: resp.Body, left: b.limit, limit: b.limit}
	return resp, nil
}

// boundedBody fails a read once more than limit bytes were read.
type boundedBody struct {
	io.ReadCloser
	left, limit int64
}

// Read implements io.Reader.
func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, fmt.Errorf("answer larger than %d MiB: not a Prometheus query result", b.limit>>20)
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return 0, fmt.Errorf("answer larger than %d MiB: not a Prometheus query result", b.limit>>20)
	}
	return n, err
}
