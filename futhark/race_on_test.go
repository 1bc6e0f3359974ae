//go:build race

package futhark

const raceEnabled = true
