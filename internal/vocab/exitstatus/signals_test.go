package exitstatus

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestSignalHandler: the first signal cancels with its cause; a repeat of
// it within the duplicate window (make forwarding beside timeout's group
// signal) is the same stop; a second one runs the cleanup and exits
// 128+N; a third during the cleanup exits at once.
func TestSignalHandler(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		window  time.Duration
		sigs    []syscall.Signal
		block   bool // the cleanup blocks until its context ends
		want    int  // exit status
		cleaned bool // the cleanup ran to its end
	}{
		// SIGTERM twice at once, then SIGINT: the repeat is a duplicate,
		// SIGINT is the second signal
		{"duplicate ignored", time.Hour, []syscall.Signal{syscall.SIGTERM, syscall.SIGTERM, syscall.SIGINT}, false, 130, true},
		// SIGTERM again past the window is a second signal
		{"repeat past the window", 0, []syscall.Signal{syscall.SIGTERM, syscall.SIGTERM}, false, 143, true},
		// another signal at once is a second signal, window or not
		{"other signal", time.Hour, []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}, false, 143, true},
		// a third signal while the cleanup hangs exits without it
		{"third exits at once", 0, []syscall.Signal{syscall.SIGINT, syscall.SIGINT, syscall.SIGTERM}, true, 143, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sigs := make(chan os.Signal)
			exits := make(chan int, 1)
			cleaned := make(chan struct{})
			started := make(chan struct{})
			cleanup := func(ctx context.Context) {
				close(started)
				if tc.block {
					<-ctx.Done()
					return
				}
				close(cleaned)
			}
			h := handler{sigs: sigs, stderr: io.Discard, cleanup: []func(context.Context){cleanup}, exit: func(c int) { exits <- c }, window: tc.window}
			ctx, cancel := context.WithCancelCause(context.Background())
			go h.run(cancel)
			for i, s := range tc.sigs {
				sigs <- s
				if i == 0 {
					<-ctx.Done()
					var se SignalError
					if !errors.As(context.Cause(ctx), &se) || se.Sig != s {
						t.Fatalf("cause %v, want %v", context.Cause(ctx), s)
					}
				}
				if tc.block && i == 1 {
					<-started // the third signal comes during the cleanup
				}
			}
			if got := <-exits; got != tc.want {
				t.Errorf("exit %d, want %d", got, tc.want)
			}
			select {
			case <-cleaned:
				if !tc.cleaned {
					t.Error("the cleanup finished, want it cut short")
				}
			default:
				if tc.cleaned {
					t.Error("exited before the cleanup finished")
				}
			}
		})
	}
}

// TestStopChildren: a child stopped through its context gets SIGINT in
// its own process group, as does what it started (go test and its test
// binary), and has time to finish its own cleanup: here this test binary
// twice over, the child waiting for the grandchild, each writing a mark
// on SIGINT.
func TestStopChildren(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestStopChildrenHelper$")
	cmd.Env = append(os.Environ(), envHelperRole+"=child", envHelperDir+"="+dir)
	StopChildren(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer KillGroup(cmd)
	deadline := time.Now().Add(time.Minute)
	for !exists(filepath.Join(dir, "grandchild.up")) {
		if time.Now().After(deadline) {
			t.Fatal("the grandchild never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	err := cmd.Wait()
	KillGroup(cmd)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("wait: %v, want the child's own exit 130 after its cleanup", err)
	}
	for _, f := range []string{"child.done", "grandchild.done"} {
		if !exists(filepath.Join(dir, f)) {
			t.Errorf("no %s: SIGINT did not reach it, or it was not given time to finish", f)
		}
	}
}

// The helper process's settings.
const (
	envHelperRole = "EXITSTATUS_HELPER_ROLE"
	envHelperDir  = "EXITSTATUS_HELPER_DIR"
)

// TestStopChildrenHelper is TestStopChildren's child and grandchild; run
// directly it does nothing.
func TestStopChildrenHelper(t *testing.T) {
	role, dir := os.Getenv(envHelperRole), os.Getenv(envHelperDir)
	if role == "" {
		return
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	var g *exec.Cmd
	if role == "child" {
		g = exec.Command(os.Args[0], "-test.run=^TestStopChildrenHelper$")
		g.Env = append(os.Environ(), envHelperRole+"=grandchild")
		if err := g.Start(); err != nil {
			os.Exit(3)
		}
	} else {
		_ = os.WriteFile(filepath.Join(dir, role+".up"), nil, 0o644)
	}
	<-sigs
	if g != nil {
		_ = g.Wait()
	}
	_ = os.WriteFile(filepath.Join(dir, role+".done"), nil, 0o644)
	os.Exit(130)
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }
