//go:build !amd64 || purego

package benchmarks

// sumF64Blocks is the portable form of the amd64 kernel: the same 16
// elements per iteration into eight accumulators.
func sumF64Blocks(xs []float64) float64 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float64
	for len(xs) >= f64Block {
		v := xs[:f64Block:f64Block]
		s0 += v[0] + v[8]
		s1 += v[1] + v[9]
		s2 += v[2] + v[10]
		s3 += v[3] + v[11]
		s4 += v[4] + v[12]
		s5 += v[5] + v[13]
		s6 += v[6] + v[14]
		s7 += v[7] + v[15]
		xs = xs[f64Block:]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// sumF32Blocks is the portable form of the amd64 kernel: eight float32
// accumulators within each block of f32Block elements, every block's sum
// added in float64.
func sumF32Blocks(xs []float32) float64 {
	var t float64
	for len(xs) >= f32Block {
		var s0, s1, s2, s3, s4, s5, s6, s7 float32
		for b := xs[:f32Block:f32Block]; len(b) >= 8; b = b[8:] {
			v := b[:8:8]
			s0 += v[0]
			s1 += v[1]
			s2 += v[2]
			s3 += v[3]
			s4 += v[4]
			s5 += v[5]
			s6 += v[6]
			s7 += v[7]
		}
		t += float64(((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)))
		xs = xs[f32Block:]
	}
	return t
}
