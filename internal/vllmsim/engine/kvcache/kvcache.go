package kvcache

// Pool is the KV cache: fixed-size blocks with reference counts, a free
// queue in eviction order, and (with prefix caching, Caching) a map from the chained
// hash of a full block's tokens to the block holding them, as in vLLM V1's
// BlockPool/KVCacheManager.
type Pool struct {
	blockSize int
	Caching   bool
	blocks    []kvBlock
	// free queue: intrusive doubly linked list of blocks with refCount 0;
	// the head is evicted/reused first. NumFree counts its blocks.
	head, tail int
	NumFree    int
	cached     map[uint64]int // block hash -> block id
}

type kvBlock struct {
	ref        int
	hash       uint64
	hashed     bool
	prev, next int
	inFree     bool
}

const noBlock = -1

// NewPool makes a pool of n blocks of blockSize tokens, with prefix
// caching when caching is set.
func NewPool(n, blockSize int, caching bool) *Pool {
	p := &Pool{blockSize: blockSize, Caching: caching, blocks: make([]kvBlock, n), head: noBlock, tail: noBlock, cached: map[uint64]int{}}
	for i := range p.blocks {
		p.blocks[i] = kvBlock{prev: noBlock, next: noBlock}
		p.pushTail(i)
	}
	return p
}

func (p *Pool) pushTail(id int) {
	b := &p.blocks[id]
	b.prev, b.next, b.inFree = p.tail, noBlock, true
	if p.tail != noBlock {
		p.blocks[p.tail].next = id
	} else {
		p.head = id
	}
	p.tail = id
	p.NumFree++
}

func (p *Pool) pushHead(id int) {
	b := &p.blocks[id]
	b.prev, b.next, b.inFree = noBlock, p.head, true
	if p.head != noBlock {
		p.blocks[p.head].prev = id
	} else {
		p.tail = id
	}
	p.head = id
	p.NumFree++
}

func (p *Pool) unlink(id int) {
	b := &p.blocks[id]
	if b.prev != noBlock {
		p.blocks[b.prev].next = b.next
	} else {
		p.head = b.next
	}
	if b.next != noBlock {
		p.blocks[b.next].prev = b.prev
	} else {
		p.tail = b.prev
	}
	b.prev, b.next, b.inFree = noBlock, noBlock, false
	p.NumFree--
}

// Usage is vLLM's kv_cache_usage_perc: 1 − free/total (evictable cached
// blocks count as free).
func (p *Pool) Usage() float64 {
	if len(p.blocks) == 0 {
		return 0
	}
	return 1 - float64(p.NumFree)/float64(len(p.blocks))
}

// Allocate takes n blocks from the head of the free queue, evicting their
// cached hashes. It returns nil when fewer than n are free.
func (p *Pool) Allocate(n int) []int {
	if n > p.NumFree {
		return nil
	}
	out := make([]int, n)
	for i := range out {
		id := p.head
		p.unlink(id)
		b := &p.blocks[id]
		if b.hashed {
			if p.cached[b.hash] == id {
				delete(p.cached, b.hash)
			}
			b.hashed = false
		}
		b.ref = 1
		out[i] = id
	}
	return out
}

// Free releases a request's blocks, in reverse order so that a request's
// tail blocks are evicted before its (more shareable) head blocks. Blocks
// without a cached hash go to the head: they hold nothing worth keeping.
func (p *Pool) Free(ids []int) {
	for i := len(ids) - 1; i >= 0; i-- {
		id := ids[i]
		b := &p.blocks[id]
		b.ref--
		if b.ref > 0 {
			continue
		}
		if b.hashed {
			p.pushTail(id)
		} else {
			p.pushHead(id)
		}
	}
}

// The 64-bit FNV-1a parameters (FNV's published offset basis and prime).
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// blockHash chains a block's tokens to its parent's hash: FNV-1a's step
// taken a word at a time (the parent hash, then each token id), with
// splitmix64's finalizer to spread the bits. The prefix cache only compares
// these hashes for equality; byte-wise FNV-1a (FNVTokens) cost four times
// the multiplications and was a tenth of a calibration replay's time.
func blockHash(parent uint64, toks []int32) uint64 {
	const prime = fnvPrime64
	h := (uint64(fnvOffset64) ^ parent) * prime
	for _, t := range toks {
		h = (h ^ uint64(uint32(t))) * prime
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

// FNVTokens is FNV-1a over the seed's 8 bytes and each token id's 4 bytes,
// little-endian.
func FNVTokens(seed uint64, toks []int32) uint64 {
	const prime = fnvPrime64
	h := uint64(fnvOffset64)
	for i := 0; i < 8; i++ {
		h ^= (seed >> (8 * i)) & 0xff
		h *= prime
	}
	for _, t := range toks {
		u := uint32(t)
		for i := 0; i < 4; i++ {
			h ^= uint64((u >> (8 * i)) & 0xff)
			h *= prime
		}
	}
	return h
}

// Hashes returns the chained hashes of the full blocks of toks, reusing
// (and extending) the already-computed prefix in have.
func (p *Pool) Hashes(toks []int32, have []uint64) []uint64 {
	full := len(toks) / p.blockSize
	for i := len(have); i < full; i++ {
		var parent uint64
		if i > 0 {
			parent = have[i-1]
		}
		have = append(have, blockHash(parent, toks[i*p.blockSize:(i+1)*p.blockSize]))
	}
	return have
}

// Lookup returns the longest run of cached blocks for the given block hashes
// (at most maxBlocks) and takes a reference on each.
func (p *Pool) Lookup(hs []uint64, maxBlocks int) []int {
	if !p.Caching {
		return nil
	}
	var out []int
	for i := 0; i < len(hs) && i < maxBlocks; i++ {
		id, ok := p.cached[hs[i]]
		if !ok {
			break
		}
		out = append(out, id)
	}
	for _, id := range out {
		b := &p.blocks[id]
		if b.ref == 0 && b.inFree {
			p.unlink(id)
		}
		b.ref++
	}
	return out
}

// Commit records the hash of a newly filled block so later requests can
// share it. If another block already holds the same content, the first one
// stays the cached copy.
func (p *Pool) Commit(id int, h uint64) {
	if !p.Caching {
		return
	}
	b := &p.blocks[id]
	if b.hashed {
		return
	}
	if _, dup := p.cached[h]; dup {
		return
	}
	b.hash, b.hashed = h, true
	p.cached[h] = id
}
