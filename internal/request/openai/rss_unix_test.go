//go:build unix

package openai

import "syscall"

// maxRSS is the process's peak resident set in bytes since it started, or
// 0 when the system does not say. Linux reports ru_maxrss in KiB.
func maxRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return int64(ru.Maxrss) << 10
}
