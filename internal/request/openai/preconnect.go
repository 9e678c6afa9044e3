package openai

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// Preconnect opens n connections to the server and leaves them idle in the
// client's pool, so that the first wave of a run at concurrency n does not
// pay TCP set-up inside its TTFT (a benchmark of the server, not of the
// client's dialer). It sends n concurrent GET /v1/models and holds every
// response open until all n have arrived, which forces n distinct
// connections; then it drains and closes them, returning each connection to
// the pool. A failure is returned with the first error seen; the run can
// still go on without warm connections.
func (c *Client) Preconnect(ctx context.Context, n int) error {
	if c.baseErr != nil {
		return fmt.Errorf("preconnect: %w", c.baseErr)
	}
	if n < 1 {
		return nil
	}
	n = min(n, c.maxConns)
	resps := make([]*http.Response, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.baseURL+"/models", nil)
			if err != nil {
				errs[i] = err
				return
			}
			if c.apiKey != "" {
				req.Header.Set("Authorization", "Bearer "+c.apiKey)
			}
			resps[i], errs[i] = c.httpClient.Do(req)
		})
	}
	wg.Wait()
	var first error
	for i, resp := range resps {
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK && first == nil {
				first = fmt.Errorf("preconnect: GET /v1/models answered %s", resp.Status)
				if rejectsKey(resp.StatusCode) {
					first = fmt.Errorf("%w: %w", first, ErrKeyRejected)
				}
			}
		}
		if errs[i] != nil && first == nil {
			first = fmt.Errorf("preconnect: %s", redactKey(errs[i].Error(), c.apiKey))
		}
	}
	return first
}
