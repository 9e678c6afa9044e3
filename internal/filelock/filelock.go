// Package filelock serializes the processes that write one file: an
// exclusive flock(2) lock on a lock file beside it, released by the
// kernel when a holder dies, so no stale lock outlives its process.
package filelock

import "time"

// Wait bounds how long Lock waits for another process's lock: the
// writers it serializes hold it for a file's write and rename.
const Wait = 30 * time.Second

// poll is how often a lock held elsewhere is tried again.
const poll = 20 * time.Millisecond
