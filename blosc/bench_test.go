package blosc

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mmapkit/mmapkit/internal/cputime"
	"github.com/mmapkit/mmapkit/internal/oracle"
)

// benchChunk is one 8 MiB Zarr chunk of float64: a smooth series (a daily
// cycle and a slow trend, as a temperature record), with numcodecs'
// default Blosc (lz4, level 5, byte shuffle).
const benchChunkBytes = 8 << 20

var benchOnce struct {
	sync.Once
	raw []byte
}

func benchRaw() []byte {
	benchOnce.Do(func() {
		b := make([]byte, benchChunkBytes)
		for i := range benchChunkBytes / 8 {
			t := float64(i)
			v := 12 + 8*math.Sin(2*math.Pi*t/1440) + 3*math.Sin(2*math.Pi*t/525600) + t*1e-6
			v = math.Round(v*100) / 100 // a sensor's resolution
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
		}
		benchOnce.raw = b
	})
	return benchOnce.raw
}

// benchFrame is the chunk as numcodecs writes it when a Python with
// numcodecs is here (so that both decoders read the same bytes), else as
// this package writes it; and the file it is in.
func benchFrame(b *testing.B) (frame []byte, path, writer string) {
	dir := b.TempDir()
	rawPath := filepath.Join(dir, "chunk.raw")
	path = filepath.Join(dir, "chunk.blosc")
	if err := os.WriteFile(rawPath, benchRaw(), 0o644); err != nil {
		b.Fatal(err)
	}
	if py := oracle.Find("numpy", "numcodecs"); py != "" {
		script := `import sys, numpy as np
from numcodecs import Blosc
a = np.fromfile(sys.argv[1], dtype="<f8")
open(sys.argv[2], "wb").write(bytes(Blosc("lz4", 5, Blosc.SHUFFLE).encode(a)))`
		if out, err := exec.Command(py, "-c", script, rawPath, path).CombinedOutput(); err != nil {
			b.Fatalf("numcodecs: %v\n%s", err, out)
		}
		frame, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		return frame, path, "numcodecs"
	}
	frame, err := Encode(nil, benchRaw(), DefaultOptions(8))
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, frame, 0o644); err != nil {
		b.Fatal(err)
	}
	return frame, path, "mmapkit"
}

// BenchmarkDecodeChunk decodes one 8 MiB chunk (lz4, byte shuffle,
// float64) here and, in the same run, with numcodecs through Python on the
// same bytes: compare the two MB/s.
//
//	go test -run XXX -bench DecodeChunk -count 3 ./blosc
func BenchmarkDecodeChunk(b *testing.B) {
	frame, path, writer := benchFrame(b)
	b.Logf("frame by %s: %d bytes → %d (ratio %.1f)", writer, len(frame), benchChunkBytes, float64(benchChunkBytes)/float64(len(frame)))
	b.Run("mmapkit", func(b *testing.B) {
		dst := make([]byte, benchChunkBytes)
		b.SetBytes(benchChunkBytes)
		for b.Loop() {
			if _, err := DecodeInto(dst, frame); err != nil {
				b.Fatal(err)
			}
		}
		if string(dst) != string(benchRaw()) {
			b.Fatal("decoded chunk differs")
		}
	})
	b.Run("vs-numcodecs", func(b *testing.B) {
		benchVersusNumcodecs(b, frame, path)
	})
}

// benchVersusNumcodecs decodes the chunk here and with numcodecs (one
// Python process, told how many decodes to time) in alternating rounds of
// about 0.2 s each, with as many threads as GOMAXPROCS on both sides, and
// reports the best round of each and their ratio: alternating makes the
// two see the same machine, busy or not.
func benchVersusNumcodecs(b *testing.B, frame []byte, path string) {
	py := oracle.Find("numpy", "numcodecs")
	if py == "" {
		b.Skip("no python3 with numcodecs here (Debian: python3-numcodecs); nothing to compare with")
	}
	threads := runtime.GOMAXPROCS(0)
	script := `import sys, time, numpy as np, numcodecs.blosc as nb
nb.set_nthreads(int(sys.argv[2]))
frame = open(sys.argv[1], "rb").read()
dst = np.empty(` + strconv.Itoa(benchChunkBytes) + `, dtype=np.uint8)
nb.decompress(frame, dst)
for line in sys.stdin:
    n, t, c = int(line), time.perf_counter_ns(), time.process_time_ns()
    for _ in range(n):
        nb.decompress(frame, dst)
    print(time.perf_counter_ns() - t, time.process_time_ns() - c, flush=True)`
	cmd := exec.Command(py, "-c", script, path, strconv.Itoa(threads))
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer cmd.Wait()
	defer in.Close()
	out := bufio.NewScanner(outPipe)
	dst := make([]byte, benchChunkBytes)
	decode := func() {
		if _, err := DecodeInto(dst, frame); err != nil {
			b.Fatal(err)
		}
	}
	decode()
	n := 1
	for start := time.Now(); time.Since(start) < 200*time.Millisecond; n++ {
		decode()
	}
	// The best wall-clock and CPU time (all threads) per decode: here,
	// numcodecs. CPU time tells the work done when the machine is busy
	// and wall-clock time is not to be trusted.
	wall := [2]float64{math.Inf(1), math.Inf(1)}
	cpu := [2]float64{math.Inf(1), math.Inf(1)}
	b.ResetTimer()
	for range 7 {
		start, startCPU := time.Now(), cputime.Process()
		for range n {
			decode()
		}
		wall[0] = min(wall[0], float64(time.Since(start).Nanoseconds())/float64(n))
		cpu[0] = min(cpu[0], float64((cputime.Process()-startCPU).Nanoseconds())/float64(n))
		fmt.Fprintln(in, n)
		if !out.Scan() {
			b.Fatalf("numcodecs stopped: %v", out.Err())
		}
		f := strings.Fields(out.Text())
		if len(f) != 2 {
			b.Fatalf("numcodecs printed %q", out.Text())
		}
		ns, err1 := strconv.ParseFloat(f[0], 64)
		cns, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil {
			b.Fatalf("numcodecs printed %q", out.Text())
		}
		wall[1] = min(wall[1], ns/float64(n))
		cpu[1] = min(cpu[1], cns/float64(n))
	}
	b.StopTimer()
	if string(dst) != string(benchRaw()) {
		b.Fatal("decoded chunk differs")
	}
	b.ReportMetric(wall[0], "ns/op")
	b.ReportMetric(benchChunkBytes/wall[0]*1e3, "MB/s")
	b.ReportMetric(benchChunkBytes/wall[1]*1e3, "numcodecs-MB/s")
	b.ReportMetric(wall[1]/wall[0], "x-numcodecs")
	if cpu[0] > 0 {
		b.ReportMetric(cpu[0]/1e6, "cpu-ms/op")
		b.ReportMetric(cpu[1]/1e6, "numcodecs-cpu-ms/op")
		b.ReportMetric(cpu[1]/cpu[0], "x-numcodecs-cpu")
	}
	b.ReportMetric(float64(threads), "threads")
}

// BenchmarkEncodeChunk encodes the same chunk with numcodecs' defaults.
func BenchmarkEncodeChunk(b *testing.B) {
	raw := benchRaw()
	var dst []byte
	b.SetBytes(benchChunkBytes)
	for b.Loop() {
		var err error
		if dst, err = Encode(dst[:0], raw, DefaultOptions(8)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(raw))/float64(len(dst)), "ratio")
}
