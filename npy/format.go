package npy

import (
	"bytes"
	"encoding/binary"
	"strings"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/mmapfile"
)

func init() {
	format.Register(format.Format{
		Name:        "npy",
		Description: "NumPy arrays: .npy files and .npz archives of them",
		Extensions:  []string{".npy", ".npz"},
		Sniff:       sniff,
		Open:        openFormat,
		Write:       writeFormat,
		Params: []format.Param{
			{Name: "npy-large-headers", Write: true, Switch: true, NoValue: "true",
				Usage: "write .npy headers longer than the 10000 characters np.load reads by default (it then needs allow_pickle=True)"},
		},
	})
}

// MaskSuffix names the bool field that holds a nullable table column's
// nulls in a structured .npy (and the bool member beside it in an .npz):
// the column "x" becomes the field "x" and the field "x.mask", True where
// the cell is null, as numpy.ma's masks are. Reading a structured .npy as
// a table folds such a field back into its column.
const MaskSuffix = ".mask"

// sniff recognises NumPy's magic, or a ZIP archive whose first member is
// a .npy file.
func sniff(head []byte) bool {
	if bytes.HasPrefix(head, []byte(magic)) {
		return true
	}
	if len(head) < localLen || binary.LittleEndian.Uint32(head) != sigLocal {
		return false
	}
	n := int(binary.LittleEndian.Uint16(head[26:]))
	return localLen+n <= len(head) && strings.HasSuffix(string(head[localLen:localLen+n]), ".npy")
}

func openFormat(path string, mode mmapfile.Mode, o *format.Options) (format.File, error) {
	var opts Options
	if o != nil {
		opts = Options{Options: o.Options, Lenient: o.Lenient, Salvage: o.Salvage, Repair: o.Repair}
	}
	return OpenFile(path, mode, &opts)
}

var (
	_ format.File         = (*File)(nil)
	_ format.Payloader    = (*File)(nil)
	_ format.Setter       = (*File)(nil)
	_ format.Damaged      = (*File)(nil)
	_ format.TableScanner = (*File)(nil)
	_ format.TextReader   = (*File)(nil)
)
