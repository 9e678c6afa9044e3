// Package clientbench holds the benchmarks of the client's own capacity
// (package openai, the client) against the simulator: streamed tokens per
// second of client CPU, and memory per in-flight stream at 1,000
// concurrent streams. It has no code of its own, and sits apart from
// openai's tests because the simulator runs as this test binary's child:
//
//	go test -run '^$' -bench . -benchtime 3x ./internal/request/openai/clientbench/
package clientbench
