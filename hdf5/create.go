package hdf5

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/mmapkit/mmapkit/layout"
)

// DatasetSpec describes a dataset for Create.
type DatasetSpec struct {
	// Name is the dataset's path ("/grid/temperature"); "/" in it makes
	// groups, as in Write.
	Name      string
	Type      layout.Type
	Shape     []int64
	BigEndian bool
}

// Create makes a new HDF5 file at path holding the datasets described,
// every element zero, laid out as Write lays out contiguous datasets
// (each at a 64-byte aligned offset), and opens it read-write, as NumPy's
// open_memmap(mode="w+") does: fill each dataset through View (or Set),
// then Close. The file is built beside path and put in place by Close,
// replacing what was there (keeping its permission bits); until then path
// is untouched, and a failure leaves it as it was. The data are not
// written: the file's holes read as zero.
func Create(path string, datasets []DatasetSpec, o *Options) (*File, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	src := &specSource{}
	for _, d := range datasets {
		src.recs = append(src.recs, format.Record{Array: layout.Array{Name: d.Name, Type: d.Type, Shape: d.Shape, BigEndian: d.BigEndian, Offset: -1}, Kind: format.KindArray})
	}
	root, err := planTree(src, false, "")
	if err != nil {
		return nil, errAt(path, -1, err, "create")
	}
	tmp, err := atomicfile.Create(path, opts.Perm)
	if err != nil {
		return nil, err
	}
	if err := writeTree(tmp.File, src, root, &writeOptions{level: -1, holes: true}); err != nil {
		tmp.Abort()
		return nil, errAt(path, -1, err, "create")
	}
	mf, err := tmp.Map(&opts.Options)
	if err != nil {
		tmp.Abort()
		return nil, err
	}
	f := &File{name: path, opts: opts, writable: true, commit: tmp}
	if err := f.load(mf); err != nil {
		tmp.Abort()
		return nil, err
	}
	return f, nil
}

// specSource is a Source of Create's datasets, which have no values to
// read.
type specSource struct{ recs []format.Record }

func (s *specSource) Records() []format.Record { return s.recs }

func (s *specSource) ReadArray(i int, _ []byte, _ int64, _ layout.Order, _ binary.ByteOrder) error {
	return fmt.Errorf("dataset %q is created empty: %w", s.recs[i].Name, errors.ErrUnsupported)
}
