package exitstatus

import (
	"os/exec"
	"time"
)

// ChildGrace is how long a child told to stop (StopChildren) gets before
// it and its process group are killed: longer than CleanupTimeout, so
// that a test binary that removes its containers on a signal finishes.
const ChildGrace = CleanupTimeout + 10*time.Second

// StopChildren makes cmd, when its context ends, pass the stop on: cmd
// runs in a process group of its own, the group (cmd and whatever it
// started: go test's test binary) gets SIGINT, and cmd gets ChildGrace to
// exit before it is killed; KillGroup then ends what is left of the
// group. SIGINT whatever stopped this process: the go command ignores
// SIGINT and waits for its test binary, which removes its containers
// (TestMain) and exits, whereas SIGTERM would end the go command at once
// and leave the test binary running unwatched. Call it before cmd.Start.
func StopChildren(cmd *exec.Cmd) {
	setGroup(cmd)
	cmd.Cancel = func() error { return interruptGroup(cmd) }
	cmd.WaitDelay = ChildGrace
}

// KillGroup kills whatever is left of the process group StopChildren gave
// cmd, once cmd has been waited for (nothing, when the children exited).
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		killGroup(cmd)
	}
}
