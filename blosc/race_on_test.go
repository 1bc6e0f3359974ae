//go:build race

package blosc

// raceEnabled: the race detector makes sync.Pool drop items at random.
const raceEnabled = true
