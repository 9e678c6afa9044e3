package cliflags

import (
	"os"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// TestFamilyFlag: --family sets the process's VLLMPERF_FAMILY to the
// family's key, and refuses an unknown name with the valid ones.
func TestFamilyFlag(t *testing.T) {
	t.Setenv(envvar.Family.Name, "")
	tests := []struct {
		args    []string
		want    string
		wantErr string
	}{
		{[]string{"--family", "SGLang"}, "sglang", ""},
		{[]string{"--family=vllm"}, "vllm", ""},
		{[]string{"--family", "tgi"}, "", `server family "tgi" is unknown: use one of `},
	}
	for _, tt := range tests {
		f := pflag.NewFlagSet("t", pflag.ContinueOnError)
		f.SetOutput(new(strings.Builder))
		Family(f)
		err := f.Parse(tt.args)
		if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%q: err = %v, want %q", tt.args, err, tt.wantErr)
			continue
		}
		if err == nil && os.Getenv(envvar.Family.Name) != tt.want {
			t.Errorf("%q: %s = %q, want %q", tt.args, envvar.Family.Name, os.Getenv(envvar.Family.Name), tt.want)
		}
	}
}
