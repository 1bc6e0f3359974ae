package zarr

import (
	"fmt"
	"strconv"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

var (
	_ format.File    = (*Store)(nil)
	_ format.Setter  = (*Store)(nil)
	_ format.Damaged = (*Store)(nil)
)

func init() {
	format.Register(format.Format{
		Name:        "zarr",
		Description: "Zarr v2 and v3 stores: chunked arrays in directories, as dask and xarray read them",
		Extensions:  []string{".zarr"},
		Dir:         true,
		SniffDir:    isStore,
		Open: func(path string, mode mmapfile.Mode, o *format.Options) (format.File, error) {
			return OpenFile(path, mode, options(o))
		},
		Write: func(path string, src format.Source, o *format.Options) error {
			opts := options(o)
			if opts == nil {
				opts = &Options{}
			}
			if err := writeParams(opts, o); err != nil {
				return storeErr(path, ErrInvalid, err.Error())
			}
			return Write(path, src, opts)
		},
		CheckParams: func(p map[string]string, write bool) error {
			if !write {
				return nil
			}
			return writeParams(&Options{}, &format.Options{Params: p})
		},
		Params: []format.Param{
			{Name: "zarr-version", Usage: "Zarr version of the store written: 2 or 3 (default 3)", Write: true},
			{Name: "chunks", Usage: "chunk shape of the arrays written, such as 512,1024 (default: chunks of about 8 MiB chosen from each array's shape)", Write: true},
			{Name: "shards", Usage: "version 3: gather chunks into shard files of this shape, such as 4096,4096", Write: true},
			{Name: "compress", Usage: "none|zlib|gzip|zstd[:LEVEL]|blosc[:CNAME[:LEVEL]] (default none: chunks that map as typed slices; blosc is numcodecs' Blosc, by default lz4 level 5 with byte shuffle; CNAME: blosclz, lz4, lz4hc, snappy, zlib, zstd)", Write: true},
		},
	})
}

// options turns the format-neutral options into this package's.
func options(o *format.Options) *Options {
	if o == nil {
		return nil
	}
	return &Options{Options: o.Options, Lenient: o.Lenient, Salvage: o.Salvage}
}

// writeParams reads the writing parameters.
func writeParams(opts *Options, o *format.Options) error {
	if v := o.Param("zarr-version"); v != "" {
		switch v {
		case "2", "3":
			opts.Version, _ = strconv.Atoi(v)
		default:
			return fmt.Errorf("zarr-version %q is not 2 or 3", v)
		}
	}
	var err error
	if opts.Chunks, err = layout.ParseShape("chunks", o.Param("chunks")); err != nil {
		return err
	}
	if opts.Shards, err = layout.ParseShape("shards", o.Param("shards")); err != nil {
		return err
	}
	if opts.Shards != nil && opts.Version == 2 {
		return fmt.Errorf("shards %q need Zarr version 3, not 2", o.Param("shards"))
	}
	opts.Compress = o.Param("compress")
	if _, err := parseCompress(opts.Compress); err != nil {
		return err
	}
	return nil
}
