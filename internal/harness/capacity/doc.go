// Package capacity holds the benchmarks of the client's own capacity against
// the simulator: streamed tokens per second of client CPU, and memory per
// in-flight stream at 1,000 concurrent streams. It has no code of its own:
//
//	go test -run '^$' -bench . -benchtime 3x ./internal/harness/capacity/
package capacity
