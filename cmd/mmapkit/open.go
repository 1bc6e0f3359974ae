package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mmapkit/mmapkit/futhark"
)

// formats lists the format names of --format, --from and --to.
var formats = []string{"abf", "futhark", "daphne", "scidb", "csv"}

// openOptions says how to open an input.
type openOptions struct {
	format      string // "" = detect
	scidbFormat string
	scidbNames  []string
}

// opener opens path as one format. Adapter files register theirs in init.
type opener func(e *env, path string, o *openOptions) (*source, error)

var openers = map[string]opener{}

// byExtension maps file extensions to formats (design.md).
var byExtension = map[string]string{
	".abf":   "abf",
	".dbdf":  "daphne",
	".fut":   "futhark",
	".in":    "futhark",
	".out":   "futhark",
	".data":  "futhark",
	".scidb": "scidb",
	".csv":   "csv",
}

func validFormat(name string) bool {
	for _, f := range formats {
		if f == name {
			return true
		}
	}
	return false
}

// resolveFormat decides the format of an input: flags first, then the
// extension, then the bytes.
func resolveFormat(path string, o *openOptions) (string, error) {
	if o.format != "" && !validFormat(o.format) {
		return "", usageErr("unknown format %q (want one of %s)", o.format, strings.Join(formats, ", "))
	}
	if o.scidbFormat != "" {
		if o.format != "" && o.format != "scidb" {
			return "", usageErr("--scidb-format says the input is SciDB, but --format says %s", o.format)
		}
		return "scidb", nil
	}
	if o.format != "" {
		return o.format, nil
	}
	if f, ok := byExtension[strings.ToLower(filepath.Ext(path))]; ok {
		return f, nil
	}
	f, err := detectBytes(path)
	if err != nil {
		return "", fileErr(path, err)
	}
	return f, nil
}

// detectBytes tells ABF and Futhark files apart by their first bytes.
// DAPHNE and SciDB files have no magic number and are never detected.
func detectBytes(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", err
	}
	return sniff(head[:n])
}

var (
	abfALittle = []byte{6, 0, 0, 0, 0, 0, 0, 0, 'L', 'I', 'T', 'T', 'L', 'E'}
	abfABig    = []byte{0, 0, 0, 0, 0, 0, 0, 6, 'B', 'I', 'G', ' ', ' ', ' '}
)

// sniff classifies the first bytes of a file.
func sniff(head []byte) (string, error) {
	switch {
	case len(head) == 0:
		return "abf", nil // an empty file is an ABF Format C file with no records
	case bytes.HasPrefix(head, abfALittle), bytes.HasPrefix(head, abfABig):
		return "abf", nil
	case head[0] == 0x00 || head[0] == 0xFF:
		return "abf", nil // the flag byte of an ABF B/C record
	}
	if futhark.Sniff(head) {
		return "futhark", nil
	}
	return "", errors.New("cannot tell the format from the file's bytes (DAPHNE files need the .dbdf extension or --format daphne, SciDB files --scidb-format '(...)'); use --format")
}

// openSource opens an input with the given options.
func openSource(e *env, path string, o *openOptions) (*source, error) {
	format, err := resolveFormat(path, o)
	if err != nil {
		return nil, err
	}
	if format == "scidb" && o.scidbFormat == "" {
		return nil, fileUsageErr(path, errors.New("a SciDB file needs its format string: --scidb-format '(...)'"))
	}
	op, ok := openers[format]
	if !ok {
		return nil, fileErr(path, fmt.Errorf("format %s is not supported by this build", format))
	}
	s, err := op(e, path, o)
	if err != nil {
		return nil, fileErr(path, err)
	}
	return s, nil
}

// openOptionsFrom turns the reading flags into open options.
func openOptionsFrom(rf *readFlags) *openOptions {
	return &openOptions{format: rf.format, scidbFormat: rf.scidbFormat, scidbNames: splitNames(rf.scidbNames)}
}
