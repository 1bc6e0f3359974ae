package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mmapkit/mmapkit/format"
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

// sniff classifies the first bytes of a file: ABF as package abf
// recognises it, else Futhark.
func sniff(head []byte) (string, error) {
	if f, ok := format.Lookup("abf"); ok && f.Sniff(head) {
		return "abf", nil
	}
	// Futhark: whitespace and comments, then a binary value ('b', version 2)
	// or the start of a text value.
	i := 0
	for i < len(head) {
		c := head[i]
		switch {
		case c == ' ' || (c >= 0x09 && c <= 0x0D) || c == 0xA0:
			i++
			continue
		case c == '-' && i+1 < len(head) && head[i+1] == '-':
			j := bytes.IndexByte(head[i:], '\n')
			if j < 0 {
				return "futhark", nil // a comment-only prefix
			}
			i += j + 1
			continue
		}
		break
	}
	if i == len(head) {
		return "futhark", nil
	}
	c := head[i]
	switch {
	case c == 'b' && i+1 < len(head) && head[i+1] == 2:
		return "futhark", nil
	case c == '[' || c == '-' || c == '+' || c == '"' || (c >= '0' && c <= '9'),
		bytes.HasPrefix(head[i:], []byte("true")), bytes.HasPrefix(head[i:], []byte("false")),
		bytes.HasPrefix(head[i:], []byte("empty(")), bytes.HasPrefix(head[i:], []byte("f16.")),
		bytes.HasPrefix(head[i:], []byte("f32.")), bytes.HasPrefix(head[i:], []byte("f64.")):
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
