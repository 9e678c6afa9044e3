package deploy_test

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes the kernel kill a child process when the test process
// dies, so that a test killed by its -timeout leaves no simulator or
// Prometheus behind.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
