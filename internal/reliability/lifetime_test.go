//go:build linux

package reliability

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// A view used after its file was closed (or its region unmapped) must
// never reach another file that was mapped later at the same address. The
// child maps a.bin, keeps a view, closes the file (arg 0) or unmaps the
// region (arg 1), opens b.bin (same size) read-write and maps it, then
// writes through a's stale view. The closed mapping was replaced by an
// inaccessible reservation, so the write faults (SEGV_ACCERR: the page is
// there, without access) and the Go runtime kills the child ("unexpected
// fault address"); b.bin is unchanged. Without the reservation b's mapping
// usually lands at a's old address and the write silently changes b.bin.

const staleSize = 16 * 4096

func init() {
	children["stale-view-write"] = func(dir string, unmap int64) error {
		a, err := mmapfile.Open(filepath.Join(dir, "a.bin"))
		if err != nil {
			return err
		}
		ra, err := a.MapAll()
		if err != nil {
			return err
		}
		stale := ra.Bytes()
		if unmap == 1 {
			err = ra.Unmap()
		} else {
			err = a.Close()
		}
		if err != nil {
			return err
		}
		b, err := mmapfile.OpenFile(filepath.Join(dir, "b.bin"), mmapfile.ReadWrite, nil)
		if err != nil {
			return err
		}
		rb, err := b.MapAll()
		if err != nil {
			return err
		}
		fmt.Printf("a=%#x b=%#x\n", unsafeslice.Addr(stale), unsafeslice.Addr(rb.Bytes()))
		os.Stdout.Sync()
		for i := range stale {
			stale[i] = 0xEE
		}
		fmt.Println("wrote through the stale view")
		return b.Close()
	}
}

func TestStaleViewFaultsInsteadOfWritingAnotherFile(t *testing.T) {
	for _, c := range []struct {
		name string
		arg  int64
	}{{"after Close", 0}, {"after Unmap", 1}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			a := bytes.Repeat([]byte{0xAA}, staleSize)
			b := patterned(staleSize)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "a.bin"), a, 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "b.bin"), b, 0o644))
			before := snap(t, filepath.Join(dir, "b.bin"))

			out, code := runChild(t, "stale-view-write", dir, c.arg)
			t.Logf("child (exit %d): %.300s", code, out)
			assert.NotContains(t, out, "wrote through the stale view")
			// The Go runtime reports a fault outside Go's heap and exits
			// with status 2.
			assert.Equal(t, 2, code, "the child must die of the fault")
			var addrA, addrB uintptr
			_, err := fmt.Sscanf(out, "a=%v b=%v", &addrA, &addrB)
			require.NoError(t, err, "the child prints both addresses")
			assert.NotEqual(t, addrA, addrB, "b must not be mapped where a was")
			assert.Contains(t, out, fmt.Sprintf("unexpected fault address %#x", addrA), "the fault is at a's old address")
			assert.Contains(t, out, fmt.Sprintf("SIGSEGV: segmentation violation code=%#x addr=%#x", 2, addrA),
				"SEGV_ACCERR: the address is reserved without access, not free")
			requireUnchanged(t, filepath.Join(dir, "b.bin"), before)
		})
	}
}
