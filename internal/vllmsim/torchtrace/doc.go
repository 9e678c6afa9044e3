// Package torchtrace writes a profiling session of the simulated engine's
// steps as torch.profiler would: a Chrome trace (Trace Event Format), one
// complete event per step and counters of its batch and queues, named
// WORKER.TIME.pt.trace.json(.gz).
package torchtrace
