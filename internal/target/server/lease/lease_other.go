//go:build !unix

package lease

import "os"

// tryLock: without flock(2) the container and external backends cannot
// keep their servers apart, so they refuse to start rather than risk two
// servers on one GPU.
func tryLock(*os.File, Mode) (bool, error) { return false, errLockUnsupported }

func waitLock(*os.File, Mode) error { return errLockUnsupported }

func unlockFile(*os.File) {}
