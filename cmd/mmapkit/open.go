package main

import (
	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// openInput opens path in mode with the command's reading flags and the
// mapping's access advice (sequential for a reader that goes through the
// file once: its pages are then dropped behind it).
func openInput(rf *readFlags, path string, mode mmapfile.Mode, advice mmapfile.Advice) (format.File, error) {
	o, err := rf.options(path)
	if err != nil {
		return nil, err
	}
	o.Advice = advice
	f, err := format.OpenFile(path, mode, o)
	if err != nil {
		return nil, fileErr(path, repairHint(path, err))
	}
	return f, nil
}
