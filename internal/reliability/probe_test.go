//go:build linux

package reliability

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/abf"
	"github.com/mmapkit/mmapkit/daphne"
	"github.com/mmapkit/mmapkit/futhark"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/mmapkit/mmapkit/scidb"
)

// Which APIs survive a file truncated under a live mapping, and which kill
// the process. Each probe runs in a child process (a crash must not take
// the test binary with it): the child writes a file, opens it, cuts it to
// one page (the kernel treats this exactly as a cut by another process,
// which TestFaultTruncatedByAnotherProcess shows) and calls one API.
// Copying APIs must return an error; slices that alias the mapping cannot be
// guarded, so touching a lost page through one kills the process: that is
// the documented limit, proven here so that the docs stay true.

type probeOutcome int

const (
	probeError probeOutcome = iota // an error from the API
	probeCrash                     // the process dies of the fault
)

type probe struct {
	name   string
	expect probeOutcome
	run    func(dir string) error // the child's work; its error is printed
}

// bigFloats is eight pages of float64s, none of them zero.
func bigFloats() []float64 { return floats(8*pageSize/8, 7) }

// cut truncates path to one page.
func cut(path string) error { return os.Truncate(path, int64(pageSize)) }

// touched keeps the sums of touch alive, so that the loads are done.
var touched float64

// touch reads every element of v, as a caller scanning a view would.
func touch[T float64 | uint8](v []T) {
	var sum T
	for _, x := range v {
		sum += x
	}
	touched += float64(sum)
}

func abfProbeFile(dir string) (string, error) {
	p := filepath.Join(dir, "p.abf")
	w, err := abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "w"})
	if err != nil {
		return "", err
	}
	big := bigFloats()
	bools := make([]bool, 8*8*pageSize)
	for i := range bools {
		bools[i] = i%3 == 0
	}
	bits, err := abf.PackBits([]int64{int64(len(bools))}, bools)
	if err != nil {
		return "", err
	}
	errs := []error{
		abf.Write(w, "head", []int64{2}, []float64{1, 2}),
		abf.Write(w, "big", []int64{int64(len(big) / 4), 4}, big),
		w.WriteBits("bits", bits),
		w.WriteString("str", strings.Repeat("ζ", 4*pageSize)),
		w.Close(),
	}
	return p, errors.Join(errs...)
}

// openCut writes a file with mk, opens it with open, and cuts it.
func openCut[F any](dir string, mk func(string) (string, error), open func(string) (F, error)) (F, error) {
	var zero F
	p, err := mk(dir)
	if err != nil {
		return zero, err
	}
	f, err := open(p)
	if err != nil {
		return zero, err
	}
	return f, cut(p)
}

func abfProbe(dir string, fn func(*abf.File) error) error {
	f, err := openCut(dir, abfProbeFile, func(p string) (*abf.File, error) { return abf.Open(p, nil) })
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	return fn(f)
}

func futharkProbeFile(dir string) (string, error) {
	p := filepath.Join(dir, "p.fut")
	return p, futhark.WriteFile(p, &futhark.Options{Align: futhark.Align64}, func(e *futhark.Encoder) error {
		v0, _ := futhark.NewValue([]int64{2}, []int32{1, 2})
		v1, _ := futhark.NewValue([]int64{int64(len(bigFloats()))}, bigFloats())
		return errors.Join(e.EncodeBinary(v0), e.EncodeBinary(v1))
	})
}

func futharkProbe(dir string, fn func(*futhark.File) error) error {
	f, err := openCut(dir, futharkProbeFile, func(p string) (*futhark.File, error) { return futhark.Open(p, nil) })
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	return fn(f)
}

func daphneProbe(dir string, write func(string) error, fn func(*daphne.File) error) error {
	f, err := openCut(dir, func(dir string) (string, error) {
		p := filepath.Join(dir, "p.dbdf")
		return p, write(p)
	}, func(p string) (*daphne.File, error) { return daphne.Open(p, nil) })
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	return fn(f)
}

func writeDenseF64(p string) error { return daphne.WriteDense(p, 128, 32, bigFloats(), nil) }

func writeDenseU8(p string) error {
	v := make([]uint8, 8*pageSize)
	for i := range v {
		v[i] = uint8(i) | 1
	}
	return daphne.WriteDense(p, 8*uint64(pageSize)/64, 64, v, nil)
}

func scidbProbe(dir string, fn func(*scidb.File) error) error {
	format, err := scidb.ParseFormat("(int64 null, double)")
	if err != nil {
		return err
	}
	m, err := openCut(dir, func(dir string) (string, error) {
		p := filepath.Join(dir, "p.scidb")
		var b []byte
		for i := range 8 * pageSize / 17 {
			b = append(b, 0xff) // present
			b = binary.LittleEndian.AppendUint64(b, uint64(i))
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(float64(i)))
		}
		return p, os.WriteFile(p, b, 0o644)
	}, func(p string) (*scidb.File, error) {
		return scidb.Open(p, &scidb.Options{Format: format, Lenient: true})
	})
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	return fn(m)
}

var probes = []probe{
	{"mmapfile Region.Bytes", probeCrash, func(dir string) error {
		p := filepath.Join(dir, "p.bin")
		if err := os.WriteFile(p, patterned(8*pageSize), 0o644); err != nil {
			return err
		}
		f, err := mmapfile.Open(p)
		if err != nil {
			return err
		}
		r, err := f.MapAll()
		if err != nil {
			return err
		}
		if err := cut(p); err != nil {
			return err
		}
		touch(r.Bytes())
		return nil
	}},

	{"abf Read", probeError, func(dir string) error {
		return abfProbe(dir, func(f *abf.File) error { _, err := abf.Read[float64](f, "big"); return err })
	}},
	{"abf ReadAt", probeError, func(dir string) error {
		return abfProbe(dir, func(f *abf.File) error { return abf.ReadAt(f, "big", 3000, make([]float64, 100)) })
	}},
	{"abf ReadRowMajor", probeError, func(dir string) error {
		return abfProbe(dir, func(f *abf.File) error { _, err := abf.ReadRowMajor[float64](f, "big"); return err })
	}},
	{"abf ReadBytes", probeError, func(dir string) error {
		return abfProbe(dir, func(f *abf.File) error { _, err := f.ReadBytes("big"); return err })
	}},
	{"abf ReadBits", probeError, func(dir string) error {
		return abfProbe(dir, func(f *abf.File) error { _, err := f.ReadBits("bits"); return err })
	}},
	{"abf ReadString", probeError, func(dir string) error {
		return abfProbe(dir, func(f *abf.File) error { _, err := f.ReadString("str"); return err })
	}},
	{"abf View", probeCrash, func(dir string) error {
		return abfProbe(dir, func(f *abf.File) error {
			v, err := abf.View[float64](f, "big")
			if err == nil {
				touch(v)
			}
			return err
		})
	}},

	{"abf SetElement (r+)", probeError, func(dir string) error {
		f, err := openCut(dir, abfProbeFile, func(p string) (*abf.File, error) {
			return abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "r+"})
		})
		if err != nil {
			return fmt.Errorf("setup: %w", err)
		}
		return f.SetElement("big", 4000, le64(1))
	}},

	{"futhark Read", probeError, func(dir string) error {
		return futharkProbe(dir, func(f *futhark.File) error { _, err := futhark.Read[float64](f, 1); return err })
	}},
	{"futhark ReadAt", probeError, func(dir string) error {
		return futharkProbe(dir, func(f *futhark.File) error { return futhark.ReadAt(f, 1, 4000, make([]float64, 10)) })
	}},
	{"futhark Value", probeError, func(dir string) error {
		return futharkProbe(dir, func(f *futhark.File) error { _, err := f.Value(1); return err })
	}},
	{"futhark View", probeCrash, func(dir string) error {
		return futharkProbe(dir, func(f *futhark.File) error {
			v, err := futhark.View[float64](f, 1)
			if err == nil {
				touch(v)
			}
			return err
		})
	}},

	{"futhark SetElement (read-write)", probeError, func(dir string) error {
		f, err := openCut(dir, futharkProbeFile, func(p string) (*futhark.File, error) {
			return futhark.OpenFile(p, mmapfile.ReadWrite, nil)
		})
		if err != nil {
			return fmt.Errorf("setup: %w", err)
		}
		return f.SetElement(1, 4000, le64(1))
	}},

	{"daphne Read", probeError, func(dir string) error {
		return daphneProbe(dir, writeDenseF64, func(f *daphne.File) error { _, err := daphne.Read[float64](f, "matrix"); return err })
	}},
	{"daphne DenseValues", probeError, func(dir string) error {
		return daphneProbe(dir, writeDenseF64, func(f *daphne.File) error {
			_, _, err := daphne.DenseValues[float64](f)
			return err
		})
	}},
	{"daphne CopyDenseRange", probeError, func(dir string) error {
		return daphneProbe(dir, writeDenseF64, func(f *daphne.File) error {
			return daphne.CopyDenseRange(f, make([]float64, 32), 120, 121, 0, 32)
		})
	}},
	{"daphne ReadCSR", probeError, func(dir string) error {
		return daphneProbe(dir, func(p string) error {
			const rows = 4 * 4096
			m := &daphne.CSR[float64]{Rows: rows, Cols: 4}
			for i := range rows {
				m.RowOffsets = append(m.RowOffsets, uint64(i))
				m.ColIdxs = append(m.ColIdxs, uint64(i%4))
				m.Values = append(m.Values, float64(i)+1)
			}
			m.RowOffsets = append(m.RowOffsets, rows)
			return daphne.WriteCSR(p, m, nil)
		}, func(f *daphne.File) error { _, err := daphne.ReadCSR[float64](f); return err })
	}},
	{"daphne ReadFrame", probeError, func(dir string) error {
		return daphneProbe(dir, func(p string) error {
			const rows = 4096
			a, b := make([]int64, rows), make([]float64, rows)
			for i := range a {
				a[i], b[i] = int64(i), float64(i)
			}
			return daphne.WriteFrame(p, &daphne.Frame{Rows: rows, Columns: []any{a, b}}, nil)
		}, func(f *daphne.File) error { _, err := daphne.ReadFrame(f); return err })
	}},
	{"daphne SetElement (read-write)", probeError, func(dir string) error {
		f, err := openCut(dir, func(dir string) (string, error) {
			p := filepath.Join(dir, "p.dbdf")
			return p, writeDenseF64(p)
		}, func(p string) (*daphne.File, error) { return daphne.OpenFile(p, mmapfile.ReadWrite, nil) })
		if err != nil {
			return fmt.Errorf("setup: %w", err)
		}
		return f.SetElement(120, 3, le64(1))
	}},
	{"daphne View", probeCrash, func(dir string) error {
		p := filepath.Join(dir, "p.dbdf")
		if err := writeDenseU8(p); err != nil {
			return err
		}
		f, err := daphne.Open(p, nil)
		if err != nil {
			return err
		}
		v, err := daphne.View[uint8](f, "matrix")
		if err != nil {
			return err
		}
		if err := cut(p); err != nil {
			return err
		}
		touch(v)
		return nil
	}},

	{"scidb Strided.CopyFrom", probeError, func(dir string) error {
		return scidbProbe(dir, func(m *scidb.File) error {
			c, err := scidb.ColumnOf[float64](m, 1)
			if err != nil {
				return err
			}
			_, err = c.CopyFrom(make([]float64, m.Len()), 0)
			return err
		})
	}},
	{"scidb File.Validate", probeError, func(dir string) error {
		return scidbProbe(dir, func(m *scidb.File) error { return m.Validate() })
	}},
	{"scidb File.Read", probeError, func(dir string) error {
		return scidbProbe(dir, func(m *scidb.File) error {
			return m.Read(m.Len()-1, make(scidb.Row, 2))
		})
	}},
	{"scidb Strided.Nulls", probeError, func(dir string) error {
		return scidbProbe(dir, func(m *scidb.File) error {
			c, err := scidb.ColumnOf[int64](m, 0)
			if err != nil {
				return err
			}
			_, err = c.Nulls(0, make([]bool, m.Len()), nil)
			return err
		})
	}},
	{"scidb Strided.Copy", probeError, func(dir string) error {
		return scidbProbe(dir, func(m *scidb.File) error {
			c, err := scidb.ColumnOf[float64](m, 1)
			if err != nil {
				return err
			}
			_, err = c.Copy(make([]float64, m.Len()))
			return err
		})
	}},
}

// probeResult runs probe i in dir and describes the error it returned.
func probeResult(i int, dir string) (string, error) {
	err := probes[i].run(dir)
	switch {
	case err == nil:
		return "ok", nil
	case strings.HasPrefix(err.Error(), "setup: "):
		return "", err
	case errors.Is(err, mmapfile.ErrFault):
		return "error fault: " + err.Error(), nil
	case errors.Is(err, mmapfile.ErrOutOfRange), errors.Is(err, mmapfile.ErrTruncated):
		return "error bounds: " + err.Error(), nil
	default:
		return "error other: " + err.Error(), nil
	}
}

func init() {
	// "probe" runs probe arg in a new directory under dir; with arg -1 it
	// runs every probe expected to return an error, one line each (they
	// share a process: a crash of one fails them all, loudly).
	children["probe"] = func(dir string, arg int64) error {
		for i, p := range probes {
			if arg >= 0 && int64(i) != arg || arg < 0 && p.expect != probeError {
				continue
			}
			sub := filepath.Join(dir, strconv.Itoa(i))
			if err := os.Mkdir(sub, 0o755); err != nil {
				return err
			}
			res, err := probeResult(i, sub)
			if err != nil {
				return err
			}
			fmt.Printf("%d\t%s\n", i, strings.ReplaceAll(res, "\n", " "))
		}
		return nil
	}
}

func TestFaultProbes(t *testing.T) {
	out, code := runChild(t, "probe", t.TempDir(), -1)
	require.Equal(t, 0, code, "a probe expected to return an error crashed the process: %s", firstLines(out, 5))
	results := map[int]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		i, res, ok := strings.Cut(line, "\t")
		require.True(t, ok, "child output %q", line)
		k, err := strconv.Atoi(i)
		require.NoError(t, err)
		results[k] = res
	}
	for i, p := range probes {
		t.Run(p.name, func(t *testing.T) {
			switch p.expect {
			case probeError:
				res, ok := results[i]
				require.True(t, ok, "probe did not run")
				assert.True(t, strings.HasPrefix(res, "error fault:") || strings.HasPrefix(res, "error bounds:"),
					"want an error wrapping mmapfile.ErrFault (or a bounds error), got %q", res)
				t.Log(res)
			case probeCrash:
				out, code := runChild(t, "probe", t.TempDir(), int64(i))
				// The Go runtime ends a process that faults outside a
				// guard with "unexpected fault address" and status 2.
				assert.Equal(t, 2, code, out)
				assert.Contains(t, out, "unexpected fault address", "the documented crash: %s", firstLines(out, 3))
				t.Log(firstLines(out, 1))
			}
		})
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
