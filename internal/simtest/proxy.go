package simtest

import (
	"errors"
	"net/http"
	"net/http/httputil"
	"net/url"
)

// StreamingProxy is a reverse proxy to backend, as a gateway or a load
// balancer in front of vLLM is: httputil.ReverseProxy, flushing each SSE
// chunk as it comes, with full duplex enabled on the incoming request.
// Without full duplex the HTTP/1 server drains and closes the request body
// as soon as the proxy writes the backend's response headers; the proxy's
// transport, whose last read of that body (after its Content-Length, to see
// nothing follows) can come later on a busy machine, then fails with
// "invalid Read on closed Body" and closes its connection to the backend
// mid-answer, and the client gets "unexpected EOF" (golang/go#40747).
// HTTP/2 needs nothing and answers ErrNotSupported.
func StreamingProxy(backend *url.URL) http.Handler {
	proxy := httputil.NewSingleHostReverseProxy(backend)
	proxy.FlushInterval = -1 // stream SSE chunks as they come
	return FullDuplex(proxy)
}

// FullDuplex lets h read the request body after it has begun writing the
// response, as a reverse proxy does (StreamingProxy).
func FullDuplex(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := http.NewResponseController(w).EnableFullDuplex(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			http.Error(w, "proxy: enable full duplex: "+err.Error(), http.StatusInternalServerError)
			return
		}
		h.ServeHTTP(w, r)
	})
}
