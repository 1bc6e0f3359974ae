//go:build linux

package reliability

import (
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/abf"
	"github.com/mmapkit/mmapkit/daphne"
	"github.com/mmapkit/mmapkit/futhark"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// In-place edits go through a read-write shared mapping: a process killed
// with SIGKILL, without Sync, loses none of the edits it made, because they
// are in the page cache already (durability against power loss needs Sync;
// a crash of the process does not). A killed writer's lock dies with it, so
// the next round's writer opens the file at once.

const editElems = 1 << 15

// editValue is the value edit round r writes at index i.
func editValue(round, i int) float64 { return float64(round+1)*1e6 + float64(i) }

func le64(x float64) []byte { return binary.LittleEndian.AppendUint64(nil, math.Float64bits(x)) }

// editor is one format's in-place edit path.
type editor struct {
	role   string
	create func(path string) error
	open   func(path string) (set func(i int, le []byte) error, err error)
	read   func(path string) ([]float64, error)
}

var editors = []editor{
	{
		role: "abf-edit",
		create: func(p string) error {
			w, err := abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "w"})
			if err != nil {
				return err
			}
			if err := abf.Write(w, "x", []int64{editElems}, make([]float64, editElems)); err != nil {
				return err
			}
			return w.Close()
		},
		open: func(p string) (func(int, []byte) error, error) {
			f, err := abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "r+"})
			if err != nil {
				return nil, err
			}
			return func(i int, le []byte) error { return f.SetElement("x", int64(i), le) }, nil
		},
		read: func(p string) ([]float64, error) {
			f, err := abf.Open(p, nil)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return abf.Read[float64](f, "x")
		},
	},
	{
		role: "futhark-edit",
		create: func(p string) error {
			return futhark.WriteFile(p, &futhark.Options{Align: futhark.AlignElement}, func(e *futhark.Encoder) error {
				v, err := futhark.NewValue([]int64{editElems}, make([]float64, editElems))
				if err != nil {
					return err
				}
				return e.EncodeBinary(v)
			})
		},
		open: func(p string) (func(int, []byte) error, error) {
			f, err := futhark.OpenFile(p, mmapfile.ReadWrite, nil)
			if err != nil {
				return nil, err
			}
			return func(i int, le []byte) error { return f.SetElement(0, int64(i), le) }, nil
		},
		read: func(p string) ([]float64, error) {
			f, err := futhark.Open(p, nil)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return futhark.Read[float64](f, 0)
		},
	},
	{
		role: "daphne-edit",
		create: func(p string) error {
			return daphne.WriteDense(p, editElems/64, 64, make([]float64, editElems), nil)
		},
		open: func(p string) (func(int, []byte) error, error) {
			f, err := daphne.OpenFile(p, mmapfile.ReadWrite, nil)
			if err != nil {
				return nil, err
			}
			return func(i int, le []byte) error { return f.SetElement(uint64(i/64), uint64(i%64), le) }, nil
		},
		read: func(p string) ([]float64, error) {
			f, err := daphne.Open(p, nil)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return daphne.Read[float64](f, "matrix")
		},
	},
}

func init() {
	for _, e := range editors {
		children[e.role] = func(path string, round int64) error {
			set, err := e.open(path)
			if err != nil {
				return err
			}
			for i := range editElems {
				if err := set(i, le64(editValue(int(round), i))); err != nil {
					return err
				}
				fmt.Println(i)
			}
			time.Sleep(time.Hour) // wait for the kill
			return nil
		}
	}
}

func TestCrashInPlaceEdits(t *testing.T) {
	for _, e := range editors {
		t.Run(e.role, func(t *testing.T) {
			rng := newRand(t)
			p := filepath.Join(t.TempDir(), "edit")
			require.NoError(t, e.create(p))
			want := make([]float64, editElems)
			var reported int
			for round := range crashRounds() {
				n, d := killPlan(rng)
				lines := startChild(t, e.role, p, int64(round)).killAfter(t, n*100, d)
				for i, line := range lines {
					require.Equal(t, strconv.Itoa(i), line)
				}
				reported += len(lines)
				got, err := e.read(p)
				require.NoError(t, err, "round %d", round)
				for i := range lines {
					want[i] = editValue(round, i)
				}
				// The edit in flight at the kill is old or new, whole.
				if k := len(lines); k < editElems {
					if got[k] == editValue(round, k) {
						want[k] = got[k]
					}
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("round %d (%d edits reported): element %d is %v, want %v", round, len(lines), i, got[i], want[i])
					}
				}
			}
			t.Logf("%d rounds, %d edits reported, none lost", crashRounds(), reported)
		})
	}
}
