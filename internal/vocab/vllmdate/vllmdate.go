// Package vllmdate holds the one date layout of vLLM's benchmark results:
// the "date" key of vllm bench serve --save-result's JSON. It imports
// nothing, so a reader of results JSON (package history) names it without
// pulling in package vllmfmt, which writes it, and its dependencies.
package vllmdate

// Layout is the layout of the "date" key, vLLM's "%Y%m%d-%H%M%S" (local
// time, no zone: the writer picks the zone, the reader assumes it).
const Layout = "20060102-150405"
