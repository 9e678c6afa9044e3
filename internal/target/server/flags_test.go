package server

import (
	"strings"
	"testing"
)

// TestFlagsTarget: a target with an API path runs against its base URL,
// says so, and takes the deployment's own profile.
func TestFlagsTarget(t *testing.T) {
	t.Setenv(envBackend, "")
	o := Flags{Target: "http://127.0.0.1:8000/v1/chat/completions", Model: "m", Profile: "basic"}
	given := func(name string) bool { return name == "target" || name == "model" }
	var notes strings.Builder
	p, opts, err := o.Options(given, "key", &notes, true)
	if err != nil {
		t.Fatal(err)
	}
	var s settings
	for _, opt := range opts {
		opt(&s)
	}
	if s.backend != KindExternal || s.target != "http://127.0.0.1:8000" || s.model != "m" || s.log != nil {
		t.Errorf("settings: backend %s target %s model %s log %v", s.backend, s.target, s.model, s.log)
	}
	if !strings.Contains(notes.String(), "using the server's base URL http://127.0.0.1:8000") {
		t.Errorf("notes: %q", notes.String())
	}
	if p.Name == "basic" {
		t.Errorf("profile %s: a running deployment takes none of ours", p.Name)
	}
}
