// Package kvcache is the simulated engine's KV cache: a pool of fixed-size
// blocks with reference counts, an eviction-ordered free queue and a
// prefix cache keyed by chained block hashes, as in vLLM V1's BlockPool
// and KVCacheManager. It works on token ids and block ids only.
package kvcache
