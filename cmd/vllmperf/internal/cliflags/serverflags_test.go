package cliflags

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// TestServerFlagsTarget: a target with an API path runs against its base
// URL, says so, and takes the deployment's own profile.
func TestServerFlagsTarget(t *testing.T) {
	t.Setenv(envvar.Backend.Name, "")
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"other"},{"id":"m"}]}`)
		}
	}))
	defer ts.Close()
	o := ServerFlags{Target: ts.URL + "/v1/chat/completions", Model: "m", Profile: "basic"}
	given := func(name string) bool { return name == "target" || name == "model" }
	var notes strings.Builder
	p, opts, err := o.Options(given, "key", &notes, true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(notes.String(), "using the server's base URL "+ts.URL) {
		t.Errorf("notes: %q", notes.String())
	}
	if p.Name == "basic" {
		t.Errorf("profile %s: a running deployment takes none of ours", p.Name)
	}
	srv, err := server.Run(context.Background(), p, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	if srv.BaseURL() != ts.URL || srv.Model() != "m" {
		t.Errorf("server: base %s model %s, want %s and m", srv.BaseURL(), srv.Model(), ts.URL)
	}
}
