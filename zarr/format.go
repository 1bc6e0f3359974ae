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
			wp, err := format.ParsedParams[*Options](o, "zarr", true)
			if err != nil {
				return storeErr(path, ErrInvalid, err.Error())
			}
			opts.Version, opts.Chunks, opts.Shards, opts.Compress = wp.Version, wp.Chunks, wp.Shards, wp.Compress
			return Write(path, src, opts)
		},
		ParseParams: format.ParamsOfWriting(writeParams),
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

// writeParams parses the options of writing: the fields of Options
// they set (Version, Chunks, Shards, Compress).
func writeParams(p map[string]string) (*Options, error) {
	opts := &Options{}
	if v := p["zarr-version"]; v != "" {
		switch v {
		case "2", "3":
			opts.Version, _ = strconv.Atoi(v)
		default:
			return nil, fmt.Errorf("zarr-version %q is not 2 or 3", v)
		}
	}
	var err error
	if opts.Chunks, err = layout.ParseShape("chunks", p["chunks"]); err != nil {
		return nil, err
	}
	if opts.Shards, err = layout.ParseShape("shards", p["shards"]); err != nil {
		return nil, err
	}
	if opts.Shards != nil && opts.Version == 2 {
		return nil, fmt.Errorf("shards %q need Zarr version 3, not 2", p["shards"])
	}
	opts.Compress = p["compress"]
	if _, err := parseCompress(opts.Compress); err != nil {
		return nil, err
	}
	return opts, nil
}
