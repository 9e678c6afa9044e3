package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily/familytest"
)

// TestFamilyLaunch: the container backend lays out the command line of the
// server's family (WithFamily), through the same buildRequest as vLLM's,
// and refuses a layout the family lacks with the family's own list.
func TestFamilyLaunch(t *testing.T) {
	t.Parallel()
	p, err := profile.ParseFor(familytest.Acme(), "acme.yaml", []byte("name: acme\nmodel: org/m\nflags:\n  batch-slots: 8\n  warmup: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		opts       []Option
		entrypoint []string
		cmd        []string
	}{
		// Acme's default layout: its own command, --weights, no host.
		{"acme", []Option{WithFamily(familytest.Acme())}, []string{"acme-serve"},
			[]string{"--weights", "org/m", "--listen-port", "8000", "--batch-slots", "8", "--no-warmup"}},
		// The image's ENTRYPOINT kept, Acme's flags.
		{"acme image", []Option{WithFamily(familytest.Acme()), WithEntrypoint("image")}, nil,
			[]string{"--weights", "org/m", "--listen-port", "8000", "--batch-slots", "8", "--no-warmup"}},
		// No family: vLLM's serve.
		{"default", nil, []string{"vllm", "serve"},
			[]string{"org/m", "--host", "0.0.0.0", "--port", "8000", "--batch-slots", "8", "--no-warmup"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := defaultSettings()
			for _, o := range append(tt.opts, withHFCache("/data/hf-cache"), WithBackend(KindContainer)) {
				o(&s)
			}
			if err := s.validate(); err != nil {
				t.Fatal(err)
			}
			r, err := buildRequest(s, p)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.entrypoint, tt.entrypoint) || !slices.Equal(r.cmd, tt.cmd) {
				t.Errorf("entrypoint %q cmd %q, want %q %q", r.entrypoint, r.cmd, tt.entrypoint, tt.cmd)
			}
		})
	}
	_, err = Run(context.Background(), p, WithBackend(KindContainer), WithFamily(familytest.Acme()), WithEntrypoint("serve"))
	if !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), `entrypoint "serve": use acme (acme-serve --weights MODEL ...) or image`) {
		t.Errorf("Run with vLLM's layout on Acme = %v, want ErrSettings listing Acme's layouts", err)
	}
	_, err = Run(context.Background(), p, WithBackend(KindContainer), WithFamily(&serverfamily.Family{Name: "half"}))
	if !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), "server family half: no Metrics.Prefix") {
		t.Errorf("Run with an unusable family = %v, want ErrSettings naming it", err)
	}
}

// TestFamilyOf: a server started with a family says so; one without, and
// a Server this package did not make, are the default's.
func TestFamilyOf(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"m","object":"model"}]}`))
		}
	}))
	defer ts.Close()
	acme := familytest.Acme()
	for _, tt := range []struct {
		opts []Option
		want *serverfamily.Family
	}{
		{[]Option{WithFamily(acme)}, acme},
		{nil, serverfamily.VLLM},
	} {
		srv, err := Run(context.Background(), profile.Deployment("d"), append(tt.opts, WithBackend(KindExternal), WithTarget(ts.URL))...)
		if err != nil {
			t.Fatal(err)
		}
		if got := FamilyOf(srv); got != tt.want {
			t.Errorf("FamilyOf = %s, want %s", got.Name, tt.want.Name)
		}
		_ = srv.Close(context.Background())
	}
	if got := FamilyOf(nil); got != serverfamily.Default {
		t.Errorf("FamilyOf(nil) = %s, want the default", got.Name)
	}
}

// TestSimulatorServesVLLMOnly: the simulator (in process, or its image)
// refuses a registered family other than vLLM's, naming the backends that
// can measure it; the container backend takes it.
func TestSimulatorServesVLLMOnly(t *testing.T) {
	t.Parallel()
	p, err := profile.BuiltinsFor(serverfamily.SGLang).Get("basic")
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range [][]Option{
		{WithFamily(serverfamily.SGLang)},
		{WithFamily(serverfamily.SGLang), WithBackend(KindContainer), WithImage(SimImage)},
	} {
		_, err := Run(context.Background(), p, opts...)
		if !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), "the simulator takes vLLM's flags, not SGLang's") {
			t.Errorf("Run = %v, want a settings error naming the simulator", err)
		}
	}
	if _, err := PlanContainer(p, WithFamily(serverfamily.SGLang)); err != nil {
		t.Errorf("the container backend refused SGLang: %v", err)
	}
}
