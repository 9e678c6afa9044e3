package cliflags

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	dockerunits "github.com/docker/go-units"

	"github.com/vllmperf/vllmperf/internal/request/openai"
)

// ClientFlags are a command's client flags (vllmperf run): the API, the
// request's deadlines, the largest stream line, and where the key is.
type ClientFlags struct {
	Endpoint       string
	RequestTimeout time.Duration
	IdleTimeout    time.Duration
	MaxEventSize   string
	APIKeyEnv      string
}

// Settings checks the flags and reads the key from its variable; each
// error names the flag and the fix.
func (o *ClientFlags) Settings() (openai.Settings, error) {
	s := openai.Settings{Endpoint: openai.Endpoint(o.Endpoint)}
	switch {
	case !s.Endpoint.Known():
		return s, fmt.Errorf("--endpoint %q: want chat, completions, embeddings or rerank", o.Endpoint)
	case o.RequestTimeout < 0:
		return s, fmt.Errorf("--request-timeout %s: want a positive duration, or 0 for none", o.RequestTimeout)
	case o.IdleTimeout < 0:
		return s, fmt.Errorf("--idle-timeout %s: want a positive duration, or 0 for none", o.IdleTimeout)
	}
	n, err := dockerunits.RAMInBytes(strings.TrimSpace(o.MaxEventSize))
	if err != nil || n > math.MaxInt32 {
		return s, fmt.Errorf("--max-event-size %q: want a size such as 4MiB or 512KiB (0: no cap)", o.MaxEventSize)
	}
	s.MaxEventSize = int(n)
	if o.APIKeyEnv == "" {
		s.APIKey = os.Getenv(openai.DefaultAPIKeyEnv)
	} else if s.APIKey = os.Getenv(o.APIKeyEnv); s.APIKey == "" {
		return s, fmt.Errorf("--api-key-env %s: that variable is empty or unset; export it, or drop the flag for a server without --api-key", o.APIKeyEnv)
	}
	return s, nil
}

// KeyError says the server refused the key, naming where it came from.
func (o *ClientFlags) KeyError() error {
	switch {
	case o.APIKeyEnv != "":
		return errors.New(openai.KeyAdvice("$" + o.APIKeyEnv))
	case os.Getenv(openai.DefaultAPIKeyEnv) != "":
		return errors.New(openai.KeyAdvice("$" + openai.DefaultAPIKeyEnv))
	}
	return fmt.Errorf("%s; put it in a variable and name it with --api-key-env (default %s)", openai.KeyAdvice(""), openai.DefaultAPIKeyEnv)
}
