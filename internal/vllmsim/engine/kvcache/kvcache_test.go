package kvcache

import (
	"slices"
	"testing"
)

// TestPoolPrefixCache: a request's committed blocks outlive it as
// evictable free blocks that a later request with the same prefix finds,
// until an allocation evicts them; usage counts them as free.
func TestPoolPrefixCache(t *testing.T) {
	p := NewPool(4, 2, true)
	toks := []int32{1, 2, 3, 4, 5}
	hs := p.Hashes(toks, nil)
	if len(hs) != 2 {
		t.Fatalf("%d hashes for 5 tokens in blocks of 2, want 2", len(hs))
	}
	if again := p.Hashes(toks, hs[:1]); !slices.Equal(again, hs) {
		t.Fatalf("Hashes extending a prefix = %v, want %v", again, hs)
	}
	a := p.Allocate(3)
	if len(a) != 3 || p.NumFree != 1 || p.Usage() != 0.75 {
		t.Fatalf("Allocate(3) = %v: free %d, usage %v; want 3 blocks, 1 free, 0.75", a, p.NumFree, p.Usage())
	}
	if p.Allocate(2) != nil {
		t.Fatal("Allocate(2) with 1 free block succeeded")
	}
	p.Commit(a[0], hs[0])
	p.Commit(a[1], hs[1])
	p.Free(a)
	if p.NumFree != 4 || p.Usage() != 0 {
		t.Fatalf("after Free: free %d, usage %v; want 4, 0", p.NumFree, p.Usage())
	}
	hit := p.Lookup(hs, 2)
	if !slices.Equal(hit, a[:2]) || p.NumFree != 2 {
		t.Fatalf("Lookup = %v (free %d), want the committed blocks %v (2 free)", hit, p.NumFree, a[:2])
	}
	p.Free(hit)
	p.Allocate(4) // evicts every cached block
	if got := p.Lookup(hs, 2); len(got) != 0 {
		t.Fatalf("Lookup after eviction = %v, want none", got)
	}
}

// TestPoolWithoutCaching: without prefix caching nothing is committed or found.
func TestPoolWithoutCaching(t *testing.T) {
	p := NewPool(2, 2, false)
	hs := p.Hashes([]int32{1, 2}, nil)
	a := p.Allocate(1)
	p.Commit(a[0], hs[0])
	p.Free(a)
	if got := p.Lookup(hs, 1); got != nil {
		t.Fatalf("Lookup without caching = %v, want nil", got)
	}
}
