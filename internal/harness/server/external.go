package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/harness/profile"
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
	client := &http.Client{Timeout: externalTimeout}
	if err := externalHealthy(ctx, s, client, base); err != nil {
		return nil, err
	}
	model, err := servedModel(ctx, s, client, base, p)
	if err != nil {
		return nil, err
	}
	// One load on a deployment at a time, across processes too (lease.go):
	// two would each see the other's tokens in the server's counters.
	held, err := acquire(ctx, s, targetLocks(base), holderLine(KindExternal, p.Name))
	if err != nil {
		return nil, fmt.Errorf("start vllm: external server %s: %w", base, err)
	}
	srv := &externalServer{endpoint: endpoint{base: base, model: model, ready: time.Since(begin), desc: Description{Backend: KindExternal, Image: "external", Digest: Unknown, Env: Unknown}}, lease: held}
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

// unhealthyError is an ErrUnhealthy error with its own message.
type unhealthyError struct{ err error }

func (e unhealthyError) Error() string        { return e.err.Error() }
func (e unhealthyError) Unwrap() error        { return e.err }
func (e unhealthyError) Is(target error) bool { return target == ErrUnhealthy }

// servedModel picks the model to request: the settings' model if the
// server serves it, else the profile's served name if it does, else the
// first.
func servedModel(ctx context.Context, s settings, client *http.Client, base string, p profile.Profile) (string, error) {
	want := s.model
	body, err := get(ctx, client, base+"/v1/models", string(s.apiKey))
	if err != nil {
		var se *httpStatusError
		switch {
		case errors.As(err, &se) && se.status == http.StatusNotFound && want != "":
			return want, nil // no model list to check against: trust the caller
		case errors.As(err, &se) && (se.status == http.StatusUnauthorized || se.status == http.StatusForbidden):
			return "", fmt.Errorf("start vllm: external server %s: %w: %w", base, err, ErrKeyRejected)
		}
		return "", fmt.Errorf("start vllm: external server %s: list models: %w", base, err)
	}
	var models struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &models); err != nil {
		return "", fmt.Errorf("start vllm: external server %s: /v1/models is not an OpenAI model list: %w", base, err)
	}
	var ids []string
	for _, m := range models.Data {
		ids = append(ids, m.ID)
	}
	if len(ids) == 0 {
		return "", fmt.Errorf("start vllm: external server %s serves no model (/v1/models is empty)", base)
	}
	switch {
	case want != "" && !slices.Contains(ids, want):
		return "", fmt.Errorf("start vllm: external server %s does not serve %q (--model or %s); it serves %s", base, want, envModel, strings.Join(ids, ", "))
	case want != "":
		return want, nil
	case slices.Contains(ids, p.ServedName()):
		return p.ServedName(), nil
	}
	return ids[0], nil
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

// get fetches url (with key as a bearer token when set) and returns its
// body when the status is 200, else an *httpStatusError.
func get(ctx context.Context, client *http.Client, url, key string) ([]byte, error) {
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
	lease  *lease // the target, given back by Close
	closed closeOnce
}

// Close gives the target back to other loads; the deployment itself is
// not this process's to stop.
func (s *externalServer) Close(context.Context) error {
	return s.closed.do(func() error { s.lease.release(); return nil })
}
