package main

import (
	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// openInput opens path in mode with the command's reading flags.
func openInput(rf *readFlags, path string, mode mmapfile.Mode) (format.File, error) {
	o, err := rf.options(path)
	if err != nil {
		return nil, err
	}
	f, err := format.OpenFile(path, mode, o)
	if err != nil {
		return nil, fileErr(path, err)
	}
	return f, nil
}
