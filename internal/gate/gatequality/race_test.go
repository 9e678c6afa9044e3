//go:build race

package gatequality

// raceEnabled: the tests run under the race detector.
const raceEnabled = true
