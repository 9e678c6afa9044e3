// Package simtest starts servers for tests, in the manner of
// net/http/httptest: a vllm-sim (or any server with Serve and Close) in
// this process on a free loopback port (Serve), or this test binary run
// again as a child process (StartChild), for benchmarks whose CPU and
// memory figures must not include the server's. Buffer collects a
// server's log while it runs.
//
// simtest does not import the simulator, so that the simulator's own tests
// use it too; callers build the server:
//
//	s, err := vllmsim.New(args, log)
//	...
//	url := simtest.Serve(t, s)
//
// A child process serves what its TestMain builds:
//
//	func TestMain(m *testing.M) {
//		if role, args := simtest.Role(); role == simtest.RoleSim {
//			os.Exit(simtest.ServeChild(args, func(args []string) (simtest.Server, error) {
//				return vllmsim.New(args, io.Discard)
//			}))
//		}
//		os.Exit(m.Run())
//	}
//
// and the test starts it with simtest.StartChild(t, simtest.RoleSim, args...).
package simtest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// Buffer is a bytes.Buffer safe for one writer (a running server's log)
// and readers at the same time.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Server is what Serve runs: *vllmsim.Server has these methods.
type Server interface {
	// Serve serves on ln until ctx is done, then shuts down.
	Serve(ctx context.Context, ln net.Listener) error
	// Close releases the server when Serve never ran.
	Close() error
}

// Serve serves s on a free 127.0.0.1 port until the test ends and returns
// its base URL, "http://127.0.0.1:PORT". At cleanup it stops s (Serve's
// graceful shutdown), reports an error Serve returned, and closes
// http.DefaultClient's idle connections to it.
func Serve(t testing.TB, s Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = s.Close()
		t.Fatalf("simtest: listen on loopback: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("simtest: Serve: %v", err)
		}
		http.DefaultClient.CloseIdleConnections()
	})
	return "http://" + ln.Addr().String()
}

// RoleSim is the role of a child process that serves a simulator
// (ServeChild).
const RoleSim = "vllm-sim"

// The environment that tells a re-run test binary its role and arguments.
const (
	roleEnv = "VLLMPERF_SIMTEST_ROLE"
	argsEnv = "VLLMPERF_SIMTEST_ARGS" // newline-separated
)

// Child is this test binary run again as a child process by StartChild.
type Child struct {
	// First is the first line the child printed on stdout (ServeChild: its
	// base URL).
	First string
	// Lines reads the rest of its stdout.
	Lines *bufio.Scanner
}

// StartChild runs this test binary again as a child process in role, with
// args, running no tests or benchmarks of its own (its TestMain looks at
// Role), and returns once the child printed its first line. The child's
// stderr is this process's. When the test ends, the child's stdin closes
// (ParentGone) and StartChild waits for it to exit.
func StartChild(t testing.TB, role string, args ...string) *Child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), roleEnv+"="+role, argsEnv+"="+strings.Join(args, "\n"))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("simtest: start the %s child: %v", role, err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		t.Fatalf("simtest: the %s child printed nothing (its TestMain must call the child's side for simtest.Role()): %v", role, sc.Err())
	}
	return &Child{First: sc.Text(), Lines: sc}
}

// Role returns the role and the arguments StartChild gave this process,
// or "" in an ordinary test process.
func Role() (role string, args []string) {
	role = os.Getenv(roleEnv)
	if a := os.Getenv(argsEnv); a != "" {
		args = strings.Split(a, "\n")
	}
	return role, args
}

// ParentGone returns a channel that closes when the parent test process
// closed the child's stdin: it is done with the child, or gone.
func ParentGone() <-chan struct{} {
	gone := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(gone)
	}()
	return gone
}

// ServeChild is the child's side of StartChild(t, RoleSim, args...): it
// serves newServer(args) on a free loopback port, prints its base URL as
// the first line and serves until the parent is gone. It returns the
// process's exit status.
func ServeChild(args []string, newServer func(args []string) (Server, error)) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "simtest child:", err)
		return 1
	}
	srv, err := newServer(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "simtest child:", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	gone := ParentGone()
	go func() {
		<-gone
		cancel()
	}()
	fmt.Println("http://" + ln.Addr().String())
	if err := srv.Serve(ctx, ln); err != nil {
		fmt.Fprintln(os.Stderr, "simtest child:", err)
		return 1
	}
	return 0
}
