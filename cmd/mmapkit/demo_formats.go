package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mmapkit/mmapkit/abf"
	"github.com/mmapkit/mmapkit/mmapfile"
)

func init() { demoSteps = append(demoSteps, demoABF) }

// demoABF tells the story through the formats: write an ABF file, map and
// scan its array, edit it in place, convert it to Futhark and DAPHNE and
// back, and check that the values survived.
func demoABF(d *demo) error {
	path := filepath.Join(d.dir, "demo.abf")
	n := d.bytes / 8
	rows := int64(1024)
	for n%rows != 0 {
		rows /= 2
	}
	cols := n / rows
	dims := []int64{rows, cols}

	// Write: Julia's x = reshape(0.5 .* (0:n-1), rows, cols).
	t0 := time.Now()
	data := make([]float64, n)
	for i := range data {
		data[i] = float64(i) * 0.5
	}
	f, err := abf.OpenFile(path, mmapfile.ReadWrite, &abf.Options{Mode: "w"})
	if err != nil {
		return err
	}
	if err := abf.Write(f, "x", dims, data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	data = nil
	dur := time.Since(t0)
	size := fileSize(path)
	d.say("wrote %s: ABF (AlignedBinaryFormat.jl v0.7, Format C), key \"x\", Array{Float64,2} of %d×%d (%s file) in %.2f s, %.2f GB/s",
		path, rows, cols, human(size), dur.Seconds(), gbps(d.bytes, dur))

	// Map and scan.
	t1 := time.Now()
	f, err = abf.Open(path, nil)
	if err != nil {
		return err
	}
	rec, _ := f.Lookup("x")
	x, err := abf.View[float64](f, "x")
	if err != nil {
		f.Close()
		return err
	}
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i]
		s1 += x[i+1]
		s2 += x[i+2]
		s3 += x[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i]
	}
	sum := (s0 + s1) + (s2 + s3)
	dur = time.Since(t1)
	if err := f.Close(); err != nil {
		return err
	}
	want := 0.5 * float64(n) * float64(n-1) / 2
	d.say("opened it read-only (payload at offset %d, aligned: zero copy) and summed abf.View[float64]: sum = %.6g (expected %.6g), %.3f s, %.2f GB/s",
		rec.DataOffset, sum, want, dur.Seconds(), gbps(d.bytes, dur))
	if sum != want {
		return fmt.Errorf("ABF scan: sum %v, want %v", sum, want)
	}

	// Edit in place: Julia x[3, 2] = -1, i.e. logical [2,1].
	r, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := runSet(d.e, path, "x", "[2,1]", "-1"); err != nil {
		return err
	}
	after, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	changed := diffBytes(r, after)
	r = nil
	elemOff := rec.DataOffset + 8*(2+rows)
	d.say("mmapkit set %s x [2,1] -1: Julia's x[3,2] changed in place through a read-write mapping; %d bytes of the file differ, all in the element at offset %d = %d + 8·(2 + %d·1)",
		filepath.Base(path), len(changed), elemOff, rec.DataOffset, rows)
	for _, c := range changed {
		if c < elemOff || c >= elemOff+8 {
			return fmt.Errorf("set changed byte %d, outside the element at %d", c, elemOff)
		}
	}
	f, err = abf.Open(path, nil)
	if err != nil {
		return err
	}
	got := make([]float64, 3)
	if err := abf.ReadAt(f, "x", rows+1, got); err != nil {
		f.Close()
		return err
	}
	f.Close()
	d.detail("reopened: x[2:4, 2] = %v", got)
	if got[1] != -1 {
		return fmt.Errorf("edit not visible after reopen: %v", got)
	}

	// Convert to Futhark and DAPHNE and back.
	steps := []struct {
		in, out string
		o       convertOptions
		what    string
	}{
		{"demo.abf", "demo.in", convertOptions{to: "futhark", aligned: -1}, "Futhark binary, aligned (row-major: Julia's x[i,j] is x[i-1][j-1])"},
		{"demo.abf", "demo.dbdf", convertOptions{to: "daphne"}, "DAPHNE dense matrix (.dbdf + .meta)"},
		{"demo.in", "from-futhark.abf", convertOptions{to: "abf", names: []string{"x"}}, "ABF again"},
		{"demo.dbdf", "from-daphne.abf", convertOptions{to: "abf", names: []string{"x"}}, "ABF again"},
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for _, s := range steps {
		if _, ok := writers[s.o.to]; !ok {
			d.say("converting to %s is not in this build", s.o.to)
			continue
		}
		in, out := filepath.Join(d.dir, s.in), filepath.Join(d.dir, s.out)
		if _, err := os.Stat(in); err != nil {
			continue
		}
		t := time.Now()
		o := s.o
		if o.abfVersion == "" {
			o.abfVersion = "C"
		}
		if err := convertFile(d.e, in, out, &openOptions{}, &o); err != nil {
			return err
		}
		dur := time.Since(t)
		d.say("mmapkit convert %s %s: %s, %s in %.2f s (%.2f GB/s of values)", s.in, s.out, s.what, human(fileSize(out)), dur.Seconds(), gbps(d.bytes, dur))
		if o.to == "abf" {
			back, err := os.ReadFile(out)
			if err != nil {
				return err
			}
			if !bytes.Equal(back, orig) {
				return fmt.Errorf("%s differs from %s after the round trip", s.out, "demo.abf")
			}
			d.detail("byte-identical to demo.abf: every value and the edit survived the round trip")
		}
	}
	return nil
}

// runSet runs the set command's logic on one file.
func runSet(e *env, path, name, index, value string) error {
	idx, err := parseIndex(index)
	if err != nil {
		return err
	}
	return setElement(e, path, &openOptions{}, name, idx, value)
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return st.Size()
}

// diffBytes lists the offsets where a and b differ.
func diffBytes(a, b []byte) []int64 {
	var out []int64
	for i := 0; i < max(len(a), len(b)); i++ {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			out = append(out, int64(i))
		}
	}
	return out
}
