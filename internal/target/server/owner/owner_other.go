//go:build !linux

package owner

// ProcessStart: without /proc there is no portable way to read a
// process's start time or to look it up from here, so every owner counts
// as existing: a leftover is named and left alone, never removed on a
// guess (make remove-leftovers removes them all).
func ProcessStart(int) (start string, exists bool) { return "", true }

// pidNamespace: none to read; with "" every owner is unknown.
func pidNamespace() string { return "" }
