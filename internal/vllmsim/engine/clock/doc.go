// Package clock is the simulated engine's time: the Clock interface a
// Simulation fakes, the wall clock (Real), and WaitUntil, whose real-time
// waits end in a yielding spin for sub-millisecond precision.
package clock
