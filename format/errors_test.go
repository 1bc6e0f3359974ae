package format

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// FileError's one rendering: each part where it is known, the cause always
// shown, and a cause about the same file without its package and file.
func TestFileErrorRendering(t *testing.T) {
	mapErr := &mmapfile.Error{File: "x.npy", Offset: 4096, Op: "map", Err: mmapfile.ErrFault}
	for _, c := range []struct {
		e    FileError
		want string
	}{
		{FileError{Pkg: "npy", File: "x.npy", Offset: 128, Msg: "bad", Err: mmapfile.ErrTruncated},
			"npy: x.npy: offset 128: bad: file is truncated: unexpected EOF"},
		{FileError{Pkg: "zarr", File: "s.zarr", Key: "a/c/0", Record: "/a", Offset: 20, Msg: "cut"},
			`zarr: s.zarr: a/c/0: record "/a": offset 20: cut`},
		{FileError{Pkg: "futhark", File: "x.in", Offset: 12, Line: 2, Col: 6, Msg: "unexpected '.'", Err: errors.New("syntax error")},
			"futhark: x.in: offset 12 (line 2, column 6): unexpected '.': syntax error"},
		{FileError{Pkg: "csvtable", File: "t.csv", Offset: 16, Line: 3, Msg: "short row"},
			"csvtable: t.csv: offset 16 (line 3): short row"},
		{FileError{Pkg: "abf", File: "x.abf", Offset: -1, Err: mmapfile.ErrClosed},
			"abf: x.abf: file is closed"},
		{FileError{File: "odd", Offset: -1, Msg: "cannot tell the format", Err: ErrUnknownFormat},
			"odd: cannot tell the format: unknown format"},
		{FileError{Pkg: "npy", Offset: -1, Err: NoRecord("nope")},
			`npy: no such record "nope"`},
		{FileError{Pkg: "npy", File: "x.npy", Offset: 4096, Msg: "view", Err: mapErr},
			"npy: x.npy: offset 4096: view: map at offset 4096: " + mmapfile.ErrFault.Error()},
		{FileError{Pkg: "npy", File: "x.npy", Offset: 4096, Err: fmt.Errorf("%w: %w", mmapfile.ErrTruncated, mapErr)},
			"npy: x.npy: offset 4096: file is truncated: unexpected EOF: map at offset 4096: " + mmapfile.ErrFault.Error()},
		{FileError{Pkg: "npy", File: "y.npy", Offset: -1, Err: mapErr},
			"npy: y.npy: " + mapErr.Error()},
	} {
		assert.Equal(t, c.want, c.e.Error())
		var loc Located = &c.e
		file, off := loc.Where()
		assert.Equal(t, c.e.File, file)
		assert.Equal(t, c.e.Offset, off)
		if c.e.File != "" {
			prefix := c.e.File + ": "
			if c.e.Pkg != "" {
				prefix = c.e.Pkg + ": " + prefix
			}
			assert.Equal(t, c.want, prefix+loc.Detail())
		}
	}
}
