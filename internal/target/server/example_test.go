package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server"
)

// Start the basic profile on the in-process simulator, ask its /health,
// stop it.
func ExampleRun() {
	p, err := profile.Builtin("basic")
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	srv, err := server.Run(ctx, p, server.WithBackend(server.KindSim))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close(ctx)
	fmt.Println(srv.Model(), strings.HasPrefix(srv.BaseURL(), "http://127.0.0.1:"), srv.MetricsURL() == srv.BaseURL()+"/metrics")
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	if resp, err := client.Get(srv.BaseURL() + "/health"); err == nil {
		resp.Body.Close()
		fmt.Println(resp.StatusCode)
	}
	// Output:
	// Qwen/Qwen3-0.6B true true
	// 200
}

// Settings from the environment come first, a caller's options (from its
// flags) after them, and the last one wins. Settings Run cannot use wrap
// ErrSettings: the caller's input is wrong, not the server.
func ExampleFromEnv() {
	opts, err := server.FromEnv()
	if err != nil {
		fmt.Println(err)
		return
	}
	p, _ := profile.Builtin("basic")
	opts = append(opts, server.WithBackend(server.KindExternal), server.WithTarget("127.0.0.1:8000"))
	_, err = server.Run(context.Background(), p, opts...)
	fmt.Println(errors.Is(err, server.ErrSettings))
	fmt.Println(err)
	// Output:
	// true
	// start vllm: target: "127.0.0.1:8000" has no scheme: want the server's base URL, e.g. http://127.0.0.1:8000
}
