package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server/lease"
)

// externalTimeout bounds each of the two checks runExternal makes.
const externalTimeout = 10 * time.Second

// externalPollInterval is how often a starting external server's /health
// is polled (WithWaitReady).
const externalPollInterval = 500 * time.Millisecond

// maxModelListBytes bounds the /v1/models answer read.
const maxModelListBytes = 1 << 20

// runExternal reaches an existing deployment at the target; it starts and
// stops nothing, and the profile's flags are not applied (the deployment
// has its own): the profile only names the run. It checks /health (once,
// or until it answers 200 within WithWaitReady's bound) and reads the
// served model from /v1/models. A server without /health (404: not every
// OpenAI-compatible server has vLLM's) is checked through /v1/models
// alone; a server without /v1/models needs the model named (WithModel).
// ReadyIn is the time those checks took, not a cold start.
func runExternal(ctx context.Context, s settings, p profile.Profile) (Server, error) {
	begin := time.Now()
	base, cut, err := ParseTarget(s.target)
	if err != nil {
		return nil, fmt.Errorf("start vllm: target: %w", err)
	}
	if cut {
		s.logf("vllm external: using the base URL %s (the API paths are added to it)", base)
	}
	client := s.gateway.Client(1)
	defer client.CloseIdleConnections()
	if err := externalHealthy(ctx, s, client, base); err != nil {
		return nil, err
	}
	model, label, err := servedModel(ctx, s, client, base, p)
	if err != nil {
		return nil, err
	}
	// One load on a deployment at a time, across processes too (package lease):
	// two would each see the other's tokens in the server's counters.
	held, err := lease.Acquire(ctx, lease.TargetLocks(ctx, base), lease.Holder(string(KindExternal), p.Name), s.logf, s.leaseWaited)
	if err != nil {
		return nil, fmt.Errorf("start vllm: external server %s: %w", base, err)
	}
	srv := &externalServer{endpoint: endpoint{base: base, model: model, ready: time.Since(begin), desc: Description{Backend: KindExternal, Image: "external", Digest: Unknown, Env: Unknown}, gw: s.gateway, fam: s.family}, lease: held}
	srv.where = s.metrics
	if len(srv.where.URLs) == 0 && srv.where.Prometheus == "" {
		srv.where.URLs = []string{srv.MetricsURL()}
	}
	srv.where.Model = label
	if s.family == nil && len(srv.where.URLs) > 0 {
		srv.fam = detectFamily(ctx, s, client, srv.where.URLs[0])
	}
	s.logf("vllm external: %s serves %s (checked in %s)", base, model, srv.ready.Round(time.Millisecond))
	return srv, nil
}

// externalHealthy checks base's /health: once, or until it answers 200
// within s.waitReady. A 404 (no /health) passes.
func externalHealthy(ctx context.Context, s settings, client *http.Client, base string) error {
	deadline := time.Now().Add(s.waitReady)
	for {
		_, err := get(ctx, client, base+"/health", "")
		var se *httpStatusError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &se) && se.status == http.StatusNotFound:
			s.logf("vllm external: %s has no /health (404); checking /v1/models only", base)
			return nil
		case errors.As(err, &se) && refused(se.status):
			return fmt.Errorf("start vllm: external server %s refused the request: %w: %w (%s)", base, err, ErrKeyRejected, refusedAdvice)
		case tlsAdvice(err, s.gateway.HasCA()) != "":
			return fmt.Errorf("start vllm: external server %s: %w; %s", base, err, tlsAdvice(err, s.gateway.HasCA()))
		case s.waitReady <= 0:
			return unhealthyError{fmt.Errorf("start vllm: external server %s is not healthy: %w; check the target and that the server is up", base, err)}
		case !time.Now().Before(deadline):
			return unhealthyError{fmt.Errorf("start vllm: external server %s did not become healthy within %s (last: %w)", base, s.waitReady, err)}
		}
		s.logf("vllm external: %s not ready yet (%v); waiting up to %s", base, err, time.Until(deadline).Round(time.Second))
		select {
		case <-ctx.Done():
			return fmt.Errorf("start vllm: waiting for external server %s: %w (last: %v)", base, ctx.Err(), err)
		case <-time.After(min(externalPollInterval, time.Until(deadline))):
		}
	}
}

// refusedAdvice says what a refused request (401, 403) may want besides
// vLLM's own key.
const refusedAdvice = "a gateway in front of the server may want a header (--header 'Name: value', or 'Name: env:VAR' to read it from $VAR; VLLMPERF_HEADERS) or a client certificate (--client-cert and --client-key)"

// tlsAdvice says what to give for a TLS failure: the CA for a certificate
// not trusted here, a client certificate for a handshake the server
// refused; "" for an error that is not TLS's.
func tlsAdvice(err error, caGiven bool) string {
	var unknown x509.UnknownAuthorityError
	var verify *tls.CertificateVerificationError
	var host x509.HostnameError
	switch {
	case caGiven && (errors.As(err, &unknown) || errors.As(err, &verify)):
		return "the CA given with --ca-cert (or VLLMPERF_CA_CERT) did not sign the server's certificate: give the CA that did"
	case errors.As(err, &unknown), errors.As(err, &verify):
		return "give the CA that signed the server's certificate: --ca-cert FILE (or VLLMPERF_CA_CERT)"
	case errors.As(err, &host):
		return "the certificate is not for this host name: use the name it was issued for in the target URL"
	case strings.Contains(err.Error(), "remote error: tls:"):
		return "the server refused the TLS handshake: if it wants a client certificate (mTLS), give --client-cert and --client-key (or VLLMPERF_CLIENT_CERT and VLLMPERF_CLIENT_KEY)"
	}
	return ""
}

// refused reports whether status is a refusal: 401 or 403.
func refused(status int) bool {
	return status == http.StatusUnauthorized || status == http.StatusForbidden
}

// unhealthyError is an ErrUnhealthy error with its own message.
type unhealthyError struct{ err error }

func (e unhealthyError) Error() string        { return e.err.Error() }
func (e unhealthyError) Unwrap() error        { return e.err }
func (e unhealthyError) Is(target error) bool { return target == ErrUnhealthy }

// servedModel picks the model to request: the settings' model if the
// server serves it, else the profile's served name if it does, else the
// only one; several and none named is a settings error listing them
// (adapters marked). label is the model_name vLLM gives its series ("" when
// the server lists no models).
func servedModel(ctx context.Context, s settings, client *http.Client, base string, p profile.Profile) (model, label string, err error) {
	want := s.model
	body, err := get(ctx, client, base+"/v1/models", string(s.apiKey))
	if err != nil {
		var se *httpStatusError
		switch {
		case errors.As(err, &se) && se.status == http.StatusNotFound && want != "":
			return want, "", nil // no model list to check against: trust the caller
		case errors.As(err, &se) && refused(se.status):
			return "", "", fmt.Errorf("start vllm: external server %s: %w: %w (%s)", base, err, ErrKeyRejected, refusedAdvice)
		}
		return "", "", fmt.Errorf("start vllm: external server %s: list models: %w", base, err)
	}
	var models struct {
		Data []servedEntry `json:"data"`
	}
	if err := json.Unmarshal(body, &models); err != nil {
		return "", "", fmt.Errorf("start vllm: external server %s: /v1/models is not an OpenAI model list: %w", base, err)
	}
	var ids []string
	for _, m := range models.Data {
		ids = append(ids, m.ID)
	}
	if len(ids) == 0 {
		return "", "", fmt.Errorf("start vllm: external server %s serves no model (/v1/models is empty)", base)
	}
	switch {
	case want != "" && !slices.Contains(ids, want):
		return "", "", fmt.Errorf("start vllm: external server %s does not serve %q (--model or %s); it serves %s", base, want, envModel, listModels(models.Data))
	case want != "":
		return want, labelOf(models.Data, want), nil
	case slices.Contains(ids, p.ServedName()):
		return p.ServedName(), labelOf(models.Data, p.ServedName()), nil
	case len(ids) > 1:
		// Guessing would measure whichever model the server lists first.
		return "", "", settingsError{settingError("start vllm: external server %s serves %d models: %s; say which to measure with {Model:the WithModel option} or %s", base, len(ids), listModels(models.Data), envModel)}
	}
	return ids[0], labelOf(models.Data, ids[0]), nil
}

// labelOf is the model_name vLLM labels id's series with: an adapter's
// base model, else id itself.
func labelOf(models []servedEntry, id string) string {
	for _, m := range models {
		if m.ID == id && m.Parent != nil && *m.Parent != "" {
			return *m.Parent
		}
	}
	return id
}

// servedEntry is one /v1/models entry. vLLM lists a LoRA adapter beside
// its base model, with parent set to the base's name (and root to the
// adapter's path); a base model has no parent.
type servedEntry struct {
	ID     string  `json:"id"`
	Parent *string `json:"parent"`
	Root   string  `json:"root"`
}

// listModels names the models for a message, each adapter as such.
func listModels(models []servedEntry) string {
	var out []string
	for _, m := range models {
		if m.Parent != nil && *m.Parent != "" && *m.Parent != m.ID {
			out = append(out, fmt.Sprintf("%q (LoRA adapter of %q)", m.ID, *m.Parent))
			continue
		}
		out = append(out, fmt.Sprintf("%q", m.ID))
	}
	return strings.Join(out, ", ")
}

// apiPaths are paths of vLLM's API that a target URL may be given with
// by mistake; ParseTarget cuts the URL back to before them. Longest first.
var apiPaths = []string{"/v1/chat/completions", "/v1/completions", "/v1/models", "/v1", "/health", "/metrics"}

// ParseTarget checks the URL of an external server and returns its base
// URL: scheme, host and any path prefix (a proxy's), without a trailing
// slash. A URL given with one of the API's paths (…/v1,
// …/v1/chat/completions, …/v1/completions, …/v1/models, …/health,
// …/metrics) is cut back to before it, and cut is true. Errors wrap
// ErrSettings and show what a base URL looks like (the user's own host
// with http:// when the scheme is missing); they do not say where the URL
// came from (a flag, a variable), which the caller adds.
func ParseTarget(target string) (base string, cut bool, err error) {
	target = strings.TrimSpace(target)
	if target != "" && !strings.Contains(target, "://") {
		return "", false, settingsErrorf("%q has no scheme: want the server's base URL, e.g. http://%s", target, strings.TrimPrefix(target, "//"))
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false, settingsErrorf("%q: want the server's base URL, e.g. http://127.0.0.1:8000", target)
	}
	if u.User != nil {
		return "", false, settingsErrorf("%s://%s: put no credentials in the URL (an API key goes in a variable, vLLM --api-key)", u.Scheme, u.Host)
	}
	path := strings.TrimRight(u.Path, "/")
	for _, p := range apiPaths {
		if strings.HasSuffix(path, p) {
			path, cut = strings.TrimSuffix(path, p), p != "/v1"
			break
		}
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = path, "", "", ""
	return strings.TrimSuffix(u.String(), "/"), cut, nil
}

// httpStatusError is a non-200 answer to one of the external checks.
type httpStatusError struct {
	url    string
	status int
	text   string
}

func (e *httpStatusError) Error() string { return "GET " + e.url + ": " + e.text }

// get fetches url (with key as a bearer token when set) within
// externalTimeout and returns its body when the status is 200, else an
// *httpStatusError.
func get(ctx context.Context, client *http.Client, url, key string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, externalTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxModelListBytes))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &httpStatusError{url: url, status: resp.StatusCode, text: resp.Status}
	}
	return body, nil
}

// externalServer is a deployment this process does not own: its output
// is not visible here (Logs is nil).
type externalServer struct {
	endpoint
	lease  *lease.Lease // the target, given back by Close
	where  Metrics      // where its series are read (fleet.go)
	closed closeOnce
}

// Close gives the target back to other loads; the deployment itself is
// not this process's to stop.
func (s *externalServer) Close(context.Context) error {
	return s.closed.do(func() error { s.lease.Release(); return nil })
}
