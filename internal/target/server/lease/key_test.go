package lease

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTargetKey: every spelling of one server is one key.
func TestTargetKey(t *testing.T) {
	resolve := func(_ context.Context, host string) ([]string, error) {
		switch host {
		case "localhost":
			return []string{"::1", "127.0.0.1"}, nil
		case "vllm.internal":
			return []string{"127.0.0.9", "127.0.0.7"}, nil // never dialled
		case "v6only":
			return []string{"::1"}, nil
		}
		return nil, errors.New("no such host")
	}
	tests := []struct {
		name, base, want string
	}{
		{"ip", "http://127.0.0.1:8000", "http://127.0.0.1:8000"},
		// localhost resolves to ::1 and 127.0.0.1: the IPv4 one stands for it.
		{"localhost", "http://localhost:8000", "http://127.0.0.1:8000"},
		{"upper case", "http://LOCALHOST:8000", "http://127.0.0.1:8000"},
		// A path (a gateway's prefix) is not part of the key.
		{"path", "http://127.0.0.1:8000/team-a", "http://127.0.0.1:8000"},
		// The scheme's port when none is given.
		{"default http", "http://127.0.0.1", "http://127.0.0.1:80"},
		{"default https", "https://127.0.0.1", "https://127.0.0.1:443"},
		// Several addresses: the lowest IPv4 one, whatever the order.
		{"several", "http://vllm.internal:8000", "http://127.0.0.7:8000"},
		{"ipv6", "http://[::1]:8000", "http://[::1]:8000"},
		{"ipv6 name", "http://v6only:8000", "http://[::1]:8000"},
		// A name that does not resolve is kept.
		{"unresolved", "http://Nowhere:8000", "http://nowhere:8000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, TargetKey(context.Background(), tc.base, resolve))
		})
	}
}

// TestCanonicalGPUs: a GPU's UUID and its index are one lock where
// nvidia-smi maps them; without it the ids stay and a note says so.
func TestCanonicalGPUs(t *testing.T) {
	idx, err := parseIndexes([]byte("0, GPU-5f3c0a1e-aaaa\n1, GPU-77b1c2d3-bbbb\n"))
	require.NoError(t, err)
	list := func(context.Context) (Indexes, error) { return idx, nil }
	none := func(context.Context) (Indexes, error) { return nil, errNoNvidiaSMI }
	tests := []struct {
		name     string
		gpus     string
		list     func(context.Context) (Indexes, error)
		want     []string // lock names
		wantNote string
	}{
		// The UUID of GPU 0 takes GPU 0's lock.
		{"uuid", "GPU-5f3c0a1e-aaaa", list, []string{"devices.lock", "gpu-0.lock"}, ""},
		{"uuid lower case", "gpu-77b1c2d3-bbbb", list, []string{"devices.lock", "gpu-1.lock"}, ""},
		{"index", "0", list, []string{"devices.lock", "gpu-0.lock"}, ""},
		// The index and the UUID of one GPU given together: one lock.
		{"both", "0,GPU-5f3c0a1e-aaaa", list, []string{"devices.lock", "gpu-0.lock"}, ""},
		// A MIG instance has no index: kept.
		{"mig", "MIG-1234", list, []string{"devices.lock", "gpu-MIG-1234.lock"}, ""},
		// No nvidia-smi: the UUID stays, and the note says what that means.
		{"no nvidia-smi", "GPU-5f3c0a1e-aaaa", none, []string{"devices.lock", "gpu-GPU-5f3c0a1e-aaaa.lock"}, "locked as given"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := testGPUs(tc.gpus)
			require.NoError(t, err)
			c, note := CanonicalGPUs(context.Background(), g, tc.list)
			var got []string
			for _, l := range ContainerLocks(c) {
				got = append(got, l.File())
			}
			assert.Equal(t, tc.want, got)
			if tc.wantNote == "" {
				assert.Empty(t, note)
			} else {
				assert.True(t, strings.Contains(note, tc.wantNote), "note %q", note)
			}
		})
	}
	_, err = parseIndexes([]byte("0\n"))
	assert.Error(t, err, "a line without its UUID")
}
