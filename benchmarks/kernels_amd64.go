//go:build !purego

package benchmarks

// sumF64Blocks sums xs[:len(xs)/f64Block*f64Block] with SSE2 (see
// kernels_amd64.s).
//
//go:noescape
func sumF64Blocks(xs []float64) float64

// sumF32Blocks sums xs[:len(xs)/f32Block*f32Block] with SSE2: float32
// lanes within each block, every block's sum added in float64.
//
//go:noescape
func sumF32Blocks(xs []float32) float64
