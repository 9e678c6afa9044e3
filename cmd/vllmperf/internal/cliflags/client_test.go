package cliflags

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/internal/request/openai"
)

func parseClientFlags(t *testing.T, args ...string) (*ClientFlags, openai.Settings, error) {
	t.Helper()
	var o ClientFlags
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	Client(fs, &o)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	s, err := o.Settings()
	return &o, s, err
}

func TestClientSettings(t *testing.T) {
	t.Setenv(openai.DefaultAPIKeyEnv, "default-key")
	t.Setenv("VLLMPERF_TEST_KEY", "my-key")
	for _, tc := range []struct {
		args []string
		want string // part of the error ("" for none)
	}{
		{[]string{"--endpoint", "score"}, `--endpoint "score": want chat, completions, embeddings or rerank`},
		{[]string{"--endpoint", "rerank"}, ""},
		{[]string{"--request-timeout", "-1s"}, "--request-timeout -1s"},
		{[]string{"--idle-timeout", "-1s"}, "--idle-timeout -1s"},
		{[]string{"--max-event-size", "lots"}, `--max-event-size "lots"`},
		{[]string{"--max-event-size", "4GiB"}, `--max-event-size "4GiB"`}, // above what a line may hold
		{[]string{"--api-key-env", "VLLMPERF_TEST_SURELY_UNSET"}, "VLLMPERF_TEST_SURELY_UNSET: that variable is empty or unset"},
		{[]string{"--endpoint", "completions", "--max-event-size", "512KiB"}, ""},
	} {
		_, _, err := parseClientFlags(t, tc.args...)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v: err = %v, want %q", tc.args, err, tc.want)
		}
	}
	_, s, err := parseClientFlags(t)
	if err != nil || s.APIKey != "default-key" || s.Endpoint != openai.Chat || s.MaxEventSize != openai.DefaultMaxEventSize {
		t.Errorf("defaults: %+v, %v", s, err)
	}
	o, s, err := parseClientFlags(t, "--api-key-env", "VLLMPERF_TEST_KEY")
	if err != nil || s.APIKey != "my-key" || !strings.Contains(o.KeyError().Error(), "$VLLMPERF_TEST_KEY") {
		t.Errorf("--api-key-env: key %q, %v; key error %v", s.APIKey, err, o.KeyError())
	}
}
