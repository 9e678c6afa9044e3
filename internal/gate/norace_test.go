//go:build !race

package gate

// raceEnabled: the race detector is on (measurements skip themselves).
const raceEnabled = false
