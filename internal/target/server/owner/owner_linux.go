package owner

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// ProcessStart returns pid's start time (field 22 of /proc/PID/stat, clock
// ticks since boot) and whether the process exists. A process that exists
// but whose stat cannot be read counts as existing, start unknown.
func ProcessStart(pid int) (start string, exists bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	if err != nil {
		return "", syscall.Kill(pid, 0) != syscall.ESRCH
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// count the fields after its closing one.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", true
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); the start time is field 22.
	if len(f) < 20 {
		return "", true
	}
	if f[0] == "Z" || f[0] == "X" {
		return "", false // a zombie no longer runs: what it started is left over
	}
	return f[19], true
}

// pidNamespace names this process's pid namespace: the inode in the link
// /proc/self/ns/pid ("pid:[4026531836]"), "" when it cannot be read.
func pidNamespace() string {
	l, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(l, "pid:["), "]")
}
