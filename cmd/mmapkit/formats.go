package main

// The formats the command line knows: each registers itself with package
// format, and the commands speak only to that registry. Adding a format
// is one package and one line here.
import (
	_ "github.com/mmapkit/mmapkit/abf"
	_ "github.com/mmapkit/mmapkit/csvtable"
	_ "github.com/mmapkit/mmapkit/daphne"
	_ "github.com/mmapkit/mmapkit/futhark"
	_ "github.com/mmapkit/mmapkit/hdf5"
	_ "github.com/mmapkit/mmapkit/npy"
	_ "github.com/mmapkit/mmapkit/scidb"
	_ "github.com/mmapkit/mmapkit/zarr"
)
