package dataset

import "math"

func float32frombits(u uint32) float32 { return math.Float32frombits(u) }
func float64frombits(u uint64) float64 { return math.Float64frombits(u) }
