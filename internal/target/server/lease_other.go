//go:build !unix

package server

import "os"

// tryLock: without flock(2) the container and external backends cannot
// keep their servers apart, so they refuse to start rather than risk two
// servers on one GPU.
func tryLock(*os.File, lockMode) (bool, error) { return false, errLockUnsupported }

func waitLock(*os.File, lockMode) error { return errLockUnsupported }

func unlockFile(*os.File) {}
