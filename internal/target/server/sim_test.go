package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/target/profile"
)

// TestSimBackendServesStream starts each built-in profile in process and
// streams one request through it.
func TestSimBackendServesStream(t *testing.T) {
	for _, name := range profile.Names() {
		t.Run(name, func(t *testing.T) {
			p, err := profile.Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s, err := Run(ctx, p) // no options: the sim backend
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := s.Close(ctx); err != nil {
					t.Errorf("close: %v", err)
				}
				if err := s.Close(ctx); err != nil {
					t.Errorf("second close: %v", err)
				}
			}()
			if !strings.HasPrefix(s.BaseURL(), "http://127.0.0.1:") {
				t.Errorf("BaseURL = %q, want loopback", s.BaseURL())
			}
			if s.ReadyIn() <= 0 {
				t.Errorf("ReadyIn = %s, want > 0", s.ReadyIn())
			}
			res := streamChat(t, s.BaseURL(), s.Model())
			checkStream(t, res)
			if log := strings.Join(s.Logs(0), "\n"); !strings.Contains(log, "] Available KV cache memory: ") {
				t.Errorf("the simulator's log lacks vLLM's KV cache memory line:\n%s", log)
			}
			t.Logf("profile %s in process: ready in %s; %s", name, s.ReadyIn().Round(time.Microsecond), res)
		})
	}
}

// TestSimBackendModelOverride checks that WithModel reaches the server.
func TestSimBackendModelOverride(t *testing.T) {
	p, err := profile.Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Run(ctx, p, WithModel("org/tiny"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if s.Model() != "org/tiny" {
		t.Errorf("Model = %q, want org/tiny", s.Model())
	}
	checkStream(t, streamChat(t, s.BaseURL(), "org/tiny"))
}

// TestSimBackendBadFlag checks that the in-process simulator rejects a
// misspelt flag and the error names it.
func TestSimBackendBadFlag(t *testing.T) {
	p, err := profile.Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Run(ctx, p.WithExtraArgs("--max-num-seq", "8"))
	if err == nil {
		s.Close(ctx)
		t.Fatal("started with a bad flag")
	}
	for _, want := range []string{"start vllm:", "--max-num-seq"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
