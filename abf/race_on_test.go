//go:build race

package abf

const raceEnabled = true
