package hdf5

import (
	"errors"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/mmapfile"
)

func init() {
	format.Register(format.Format{
		Name:        "hdf5",
		Description: "HDF5 and netCDF-4 files: h5py, PyTables, MATLAB v7.3, climate and satellite data",
		Extensions:  []string{".h5", ".hdf5", ".nc"},
		Sniff:       sniff,
		Probe:       probe,
		Open:        openFormat,
		Write:       Write,
		ParseParams: format.ParamsOfWriting(writeParams),
		Params: []format.Param{
			{Name: "chunks", Usage: "chunk shape of the datasets written, such as 512,1024 (default: contiguous; with --compress, chunks of about 1 MiB chosen from each shape)", Write: true},
			{Name: "compress", Usage: "none|gzip[:LEVEL] (default none: contiguous datasets that map as typed slices; gzip: shuffle then deflate, level 4)", Write: true},
		},
	})
}

func openFormat(path string, mode mmapfile.Mode, o *format.Options) (format.File, error) {
	var opts Options
	if o != nil {
		if o.Salvage {
			return nil, errAt(path, -1, errors.ErrUnsupported, "salvage: an HDF5 file's structures are spread over the whole file, so there is no part before the damage to keep")
		}
		opts = Options{Options: o.Options, Lenient: o.Lenient}
	}
	f, err := OpenFile(path, mode, &opts)
	if err != nil {
		return nil, err // not a nil *File in a non-nil interface
	}
	return f, nil
}

var (
	_ format.File          = (*File)(nil)
	_ format.Payloader     = (*File)(nil)
	_ format.BytesSetter   = (*File)(nil)
	_ format.PartSizer     = (*File)(nil)
	_ format.Setter        = (*File)(nil)
	_ format.TextReader    = (*File)(nil)
	_ format.TableScanner  = (*File)(nil)
	_ format.ColumnScanner = (*File)(nil)
	_ format.Resolver      = (*File)(nil)
	_ format.Skipper       = (*File)(nil)
	_ format.FileInfo      = (*File)(nil)
	_ format.Locator       = (*File)(nil)
)
