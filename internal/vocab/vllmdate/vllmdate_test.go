package vllmdate_test

import (
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/vocab/vllmdate"
)

// TestLayout: vLLM's strftime("%Y%m%d-%H%M%S") of 2026-01-02 03:04:05 is
// "20260102-030405", and the layout reads it back.
func TestLayout(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	const want = "20260102-030405"
	if got := at.Format(vllmdate.Layout); got != want {
		t.Fatalf("Format = %q, want %q", got, want)
	}
	back, err := time.ParseInLocation(vllmdate.Layout, want, time.UTC)
	if err != nil || !back.Equal(at) {
		t.Fatalf("ParseInLocation(%q) = %v, %v; want %v", want, back, err, at)
	}
}
