//go:build unix

package filelock

import (
	"path/filepath"
	"sync"
	"testing"
)

// TestLockExcludes: while one holder has the lock, another waits, and
// gets it once released; so no two holders ever overlap.
func TestLockExcludes(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	var mu sync.Mutex
	inside, most := 0, 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			unlock, err := Lock(path)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			inside++
			most = max(most, inside)
			mu.Unlock()
			mu.Lock()
			inside--
			mu.Unlock()
			unlock()
		})
	}
	wg.Wait()
	if most != 1 {
		t.Errorf("%d holders at once, want 1", most)
	}
}
