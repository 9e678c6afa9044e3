//go:build !linux

package deploy_test

import "os/exec"

// dieWithTest has no portable equivalent outside Linux: children are
// stopped by the tests' cleanup only.
func dieWithTest(*exec.Cmd) {}
