package vllmsim_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/vllmperf/vllmperf/internal/vllmsim"
	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
	"github.com/vllmperf/vllmperf/internal/vllmsim/tokenizer"
)

// A prompt of N words is N tokens, each an id of the served model's
// vocabulary.
func ExampleTokenizer() {
	m, _ := presets.LookupModel("meta-llama/Llama-3.1-8B-Instruct")
	tok := tokenizer.NewTokenizer(m.Vocab)
	ids := tok.Tokenize("The quick brown fox")
	fmt.Println(len(ids), tokenizer.CountTokens("one  two\tthree"), tok.Vocab() == m.Vocab)
	// Output: 4 3 true
}

// Start a simulator on a free loopback port, send one completion, stop it.
func ExampleNew() {
	s, err := vllmsim.New([]string{"Qwen/Qwen3-0.6B", "--sim-fixed-ttft", "5ms", "--sim-fixed-itl", "1ms", "--disable-log-stats"}, io.Discard)
	if err != nil {
		fmt.Println(err)
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		_ = s.Close()
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()

	client := &http.Client{Transport: &http.Transport{}}
	resp, err := client.Post("http://"+ln.Addr().String()+"/v1/completions", "application/json",
		strings.NewReader(`{"prompt":"hello world","max_tokens":3,"ignore_eos":true}`))
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, strings.Contains(string(body), `"completion_tokens":3`))
	}
	client.CloseIdleConnections()
	cancel()
	fmt.Println(<-done)
	// Output:
	// 200 true
	// <nil>
}

// A typo in a flag reads like argparse and names the fix.
func ExampleParseArgs() {
	_, err := config.ParseArgs([]string{"--max-num-seq", "8"})
	fmt.Println(err)
	// Output: unrecognized arguments: --max-num-seq 8 (see --help; did you mean --max-num-seqs?)
}
