//go:build race

package npy

const raceEnabled = true
