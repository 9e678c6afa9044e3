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

// maxModelListBytes bounds the /v1/models answer read.
const maxModelListBytes = 1 << 20

// runExternal reaches an existing deployment at the target; it starts and
// stops nothing, and the profile's flags are not applied (the deployment
// has its own): the profile only names the run. It checks /health once and
// reads the served model from /v1/models. A server without /health (404:
// not every OpenAI-compatible server has vLLM's) is checked through
// /v1/models alone; a server without /v1/models needs the model named
// (WithModel). ReadyIn is the time those checks took, not a cold start.
func runExternal(ctx context.Context, s settings, p profile.Profile) (Server, error) {
	begin := time.Now()
	base, err := normalizeTarget(s.target)
	if err != nil {
		return nil, fmt.Errorf("start vllm: %w", err)
	}
	client := &http.Client{Timeout: externalTimeout}
	if _, err := get(ctx, client, base+"/health", ""); err != nil {
		var se *httpStatusError
		if !errors.As(err, &se) || se.status != http.StatusNotFound {
			return nil, fmt.Errorf("start vllm: external server %s is not healthy: %w; check %s (or --target) and that the server is up", base, err, envTarget)
		}
		s.logf("vllm external: %s has no /health (404); checking /v1/models only", base)
	}
	model, err := servedModel(ctx, s, client, base, p)
	if err != nil {
		return nil, err
	}
	srv := &externalServer{endpoint{base: base, model: model, ready: time.Since(begin), desc: Description{Backend: KindExternal, Image: "external"}}}
	s.logf("vllm external: %s serves %s (checked in %s)", base, model, srv.ready.Round(time.Millisecond))
	return srv, nil
}

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
		case errors.As(err, &se) && se.status == http.StatusUnauthorized:
			return "", fmt.Errorf("start vllm: external server %s wants an API key (/v1/models: %w): pass it with --api-key-env", base, err)
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

// normalizeTarget checks an external base URL and strips a trailing
// slash or /v1.
func normalizeTarget(target string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(target))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", settingsErrorf("%s (or --target) %q: want the server's base URL, e.g. http://127.0.0.1:8000", envTarget, target)
	}
	if u.User != nil {
		return "", settingsErrorf("%s (or --target): put no credentials in the URL", envTarget)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1")
	u.RawQuery, u.Fragment = "", ""
	return strings.TrimSuffix(u.String(), "/"), nil
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
type externalServer struct{ endpoint }

// Close does nothing: the deployment is not this process's to stop.
func (s *externalServer) Close(context.Context) error { return nil }
