package simbuild

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestCheckStaticLinux: what VLLMPERF_SIM_BINARY names must run as a
// FROM scratch image's entrypoint, or the error says how to build it.
func TestCheckStaticLinux(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		bin  func(t *testing.T) []byte // nil: skip the row
		want string
	}{
		// A shell script, not an executable.
		{"script", func(*testing.T) []byte { return []byte("#!/bin/sh\necho hi\n") }, "is not a Linux executable"},
		// A dynamically linked system binary.
		{"dynamic", func(t *testing.T) []byte {
			b, err := os.ReadFile("/bin/ls")
			if err != nil || !bytes.HasPrefix(b, []byte("\x7fELF")) {
				t.Skip("no ELF /bin/ls here")
			}
			return b
		}, "is dynamically linked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckStaticLinux(tt.bin(t))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
