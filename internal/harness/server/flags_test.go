package server

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestFlagsRefuse: flags that mean nothing with the backend chosen are
// refused, naming the flag and the fix.
func TestFlagsRefuse(t *testing.T) {
	t.Setenv(envBackend, "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--target", "http://127.0.0.1:1", "--profile", "basic"}, "--profile needs a backend that starts a server, but --target"},
		{[]string{"--backend", "external", "--image", "x"}, "--image needs a backend that starts a server, but --backend external"},
		{[]string{"--backend", "sim", "--image", "x"}, "--image runs a container, but --backend sim starts none"},
		{[]string{"--wait-ready", "1m"}, "--wait-ready waits for a running server named by --target"},
		{[]string{"--wait-ready", "-1s", "--target", "http://127.0.0.1:1"}, "--wait-ready -1s"},
		{[]string{"--target", "http://127.0.0.1:1", "--backend", "sim"}, "--backend sim would start nothing"},
		{[]string{"--backend", "gpu"}, "--backend: unknown backend"},
		{[]string{"--target", "ftp://x"}, "--target: "},
		{[]string{"--profile", "no-such-profile"}, "--profile: "},
		// A fleet's metrics go with a running deployment only.
		{[]string{"--metrics-url", "http://127.0.0.1:9001"}, "--metrics-url reads a deployment that is already running, named by --target"},
		{[]string{"--prometheus", "http://127.0.0.1:9090"}, "--prometheus reads a deployment that is already running"},
	} {
		var o Flags
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		o.Register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if _, _, err := o.Options(fs, "", io.Discard, true); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want it to contain %q", tc.args, err, tc.want)
		}
	}
}

// TestFlagsTarget: a target with an API path runs against its base URL,
// says so, and takes the deployment's own profile.
func TestFlagsTarget(t *testing.T) {
	t.Setenv(envBackend, "")
	var o Flags
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	o.Register(fs)
	if err := fs.Parse([]string{"--target", "http://127.0.0.1:8000/v1/chat/completions", "--model", "m"}); err != nil {
		t.Fatal(err)
	}
	var notes strings.Builder
	p, opts, err := o.Options(fs, "key", &notes, true)
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
