package metrics

import "testing"

func TestBuckets125(t *testing.T) {
	got := Buckets125(4096)
	want := []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000}
	if len(got) != len(want) {
		t.Fatalf("Buckets125(4096) = %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("Buckets125(4096) = %v, want %v", got, want)
		}
	}
}
