package cliflags

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// TestServerRefuse: flags that mean nothing with the backend chosen are
// refused, naming the flag and the fix.
func TestServerRefuse(t *testing.T) {
	t.Setenv(envvar.Backend.Name, "")
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
		var o ServerFlags
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		Server(fs, &o)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if _, _, err := o.Options(fs.Changed, "", io.Discard, true); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want it to contain %q", tc.args, err, tc.want)
		}
	}
}
