//go:build unix

package lease

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes f's flock(2) lock in mode without waiting; false when
// another open file (this process's or another's) holds a conflicting one.
func tryLock(f *os.File, mode Mode) (bool, error) {
	how := syscall.LOCK_SH
	if mode == Exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case errors.Is(err, syscall.EINTR):
			continue
		}
		return false, err
	}
}

// waitLock takes f's lock in mode, blocking until no other open file
// holds a conflicting one.
func waitLock(f *os.File, mode Mode) error {
	how := syscall.LOCK_SH
	if mode == Exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// unlockFile gives f's lock back (closing f would too).
func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
