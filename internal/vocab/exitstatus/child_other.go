//go:build !unix

package exitstatus

import "os/exec"

// Without process groups and SIGINT the child is killed (exec's default);
// its containers are removed by the next start (the server package's
// leftover reaper).
func setGroup(*exec.Cmd) {}

func interruptGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }

func killGroup(*exec.Cmd) {}
