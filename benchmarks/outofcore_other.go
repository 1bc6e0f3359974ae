//go:build !linux

package benchmarks

// The out-of-core figures need Linux: madvise and fadvise of ranges, and
// /proc for the resident memory.

func scanViewDropping(string, int) (float64, int, error) {
	return 0, 0, &notMeasured{"the out-of-core figures need Linux"}
}

func scanReadStreaming(string) (float64, int, error) {
	return 0, 0, &notMeasured{"the out-of-core figures need Linux"}
}

func residentBytes() int64 { return 0 }

func freeBytes(string) (int64, error) {
	return 0, &notMeasured{"the out-of-core figures need Linux"}
}
