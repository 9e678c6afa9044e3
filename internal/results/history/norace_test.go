//go:build !race

package history

// raceEnabled: the tests run under the race detector.
const raceEnabled = false
