// Command mmapkit lists, prints, converts and edits array files —
// AlignedBinaryFormat.jl (ABF), Futhark, DAPHNE, SciDB, NumPy, Zarr and
// CSV — mapping them instead of reading them, and runs mmapkit's demo and
// benchmarks.
//
// Usage:
//
//	mmapkit ls [--json] FILE...
//	mmapkit cat [--name NAME] FILE
//	mmapkit convert [flags] IN OUT
//	mmapkit set FILE NAME INDEX VALUE
//	mmapkit repair FILE
//	mmapkit dataset [options...]
//	mmapkit bench [--quick] [--size BYTES] [--json] [--report DIR]
//	mmapkit demo
//
// Errors are printed as "mmapkit: FILE: message" with exit status 1; usage
// errors exit with status 2; --help on any command prints its help and an
// example and exits 0.
//
// The commands speak only to package format's registry: every format
// package registers itself (formats.go imports them), and ls, cat, convert
// and set work on format.File records. cat streams values in bounded
// memory; convert hands the opened input to the target format's writer,
// which pulls it in chunks and replaces the target atomically. SIGINT and
// SIGTERM remove a conversion's temporary files before exiting.
package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/atomicfile"
)

func main() {
	// An interrupted conversion removes its temporary files before the
	// process ends; the target stays as it was.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		atomicfile.AbortAll()
		os.Exit(128 + int(s.(syscall.Signal)))
	}()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes the command line args and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	root := newRoot(env)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ex *exitError
	if errors.As(err, &ex) {
		if ex.err != nil {
			fmt.Fprintln(stderr, "mmapkit: "+ex.message())
		}
		return ex.code
	}
	// Anything cobra itself reports (unknown command or flag, missing
	// argument) is a usage error.
	fmt.Fprintf(stderr, "mmapkit: %v\nRun 'mmapkit --help' for usage.\n", err)
	return 2
}

// exitError carries an exit status and the error to print for it.
type exitError struct {
	code int
	file string // the file the error is about, or ""
	err  error  // nil: print nothing (the command printed its own message)
}

func (e *exitError) Error() string { return e.message() }
func (e *exitError) Unwrap() error { return e.err }

// message formats the error as "FILE: message" without repeating the file
// name: an error that tells its file (format.Located: every format
// package's FormatError, mmapfile's, the registry's) gives its message
// without its package and file, and *fs.PathError ("open FILE: reason")
// its reason.
func (e *exitError) message() string {
	if e.err == nil {
		return ""
	}
	if e.file == "" {
		return e.err.Error()
	}
	return e.file + ": " + detail(e.err, e.file)
}

// detail is what err says about file after naming it.
func detail(err error, file string) string {
	var loc format.Located
	if errors.As(err, &loc) {
		if f, _ := loc.Where(); f == file {
			if loc == err {
				return loc.Detail()
			}
			// Wrapped (a record named around it): the wrapper's words
			// stay, the file is named once.
			return strings.Replace(err.Error(), loc.Error(), loc.Detail(), 1)
		}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == file && pe == err {
		return pe.Err.Error()
	}
	return err.Error()
}

// aboutFile reports whether err tells that it is about file.
func aboutFile(err error, file string) bool {
	var loc format.Located
	if errors.As(err, &loc) {
		f, _ := loc.Where()
		return f == file
	}
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Path == file
}

// fileErr reports err about file with exit status 1.
func fileErr(file string, err error) error {
	if err == nil {
		return nil
	}
	var ex *exitError
	if errors.As(err, &ex) {
		return err
	}
	return &exitError{code: 1, file: file, err: err}
}

// usageErr reports a usage error (exit status 2).
func usageErr(format string, a ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, a...)}
}

// fileUsageErr reports a usage error about a file (exit status 2), e.g. a
// SciDB file without its format string.
func fileUsageErr(file string, err error) error {
	return &exitError{code: 2, file: file, err: err}
}
