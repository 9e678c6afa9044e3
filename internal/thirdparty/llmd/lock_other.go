//go:build !unix

package llmd

import "context"

// lockFile does not lock where flock is missing: concurrent processes may
// then build the binary twice, each into its own temporary file.
func lockFile(context.Context, string) (unlock func(), err error) {
	return func() {}, nil
}
