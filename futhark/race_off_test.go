//go:build !race

package futhark

const raceEnabled = false
