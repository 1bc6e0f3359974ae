package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/benchmarks"
)

// byteSize is a flag value of bytes: a number with an optional unit
// (B, KiB, MiB, GiB, TiB; K, M, G, T and KB, MB, GB, TB mean the same
// binary units).
type byteSize int64

// String is "" for 0, which the flag's help then does not print as a
// default: 0 stands for a default that the usage text describes.
func (b *byteSize) String() string {
	switch {
	case *b == 0:
		return ""
	case *b < 0:
		return "auto"
	}
	return benchmarks.HumanSize(int64(*b))
}
func (b *byteSize) Type() string { return "bytes" }

func (b *byteSize) Set(s string) error {
	if s == "auto" { // a default the flag's user works out (-1)
		*b = -1
		return nil
	}
	num := strings.TrimRightFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	unit := strings.ToLower(strings.TrimSpace(s[len(num):]))
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v < 0 {
		return fmt.Errorf("invalid size %q", s)
	}
	shift := map[string]int{"": 0, "b": 0, "k": 10, "kb": 10, "kib": 10, "m": 20, "mb": 20, "mib": 20,
		"g": 30, "gb": 30, "gib": 30, "t": 40, "tb": 40, "tib": 40}
	sh, ok := shift[unit]
	if !ok {
		return fmt.Errorf("invalid size %q (units: KiB, MiB, GiB, TiB)", s)
	}
	if v > math.MaxInt64>>sh {
		return fmt.Errorf("size %q too large", s)
	}
	*b = byteSize(v << sh)
	return nil
}
