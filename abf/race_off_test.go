//go:build !race

package abf

const raceEnabled = false
