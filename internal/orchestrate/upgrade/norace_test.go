//go:build !race

package upgrade

// raceEnabled: the tests run under the race detector.
const raceEnabled = false
