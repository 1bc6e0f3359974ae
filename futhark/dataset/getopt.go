package dataset

import (
	"fmt"
	"sort"
	"strings"
)

// argKind is GetOpt's ArgDescr: no argument, a required one, an optional
// one (only as --name=value).
type argKind int

const (
	noArg argKind = iota
	reqArg
	optArg
)

type optDesc struct {
	short   byte // 0 if none
	long    string
	arg     argKind
	argName string
	help    string
}

// parsedOpt is one option occurrence, in command-line order.
type parsedOpt struct {
	desc  *optDesc
	value string
	has   bool // optArg given
	name  string
}

// getOpt parses args as Haskell's System.Console.GetOpt does with Permute:
// options and non-options in any order, "--" ends options, unambiguous
// long prefixes, bundled short options, and an option's argument is the
// next word even when it starts with '-'.
func getOpt(descs []optDesc, args []string) (opts []parsedOpt, rest []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return opts, append(rest, args[i+1:]...), nil
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			d, err := findLong(descs, name)
			if err != nil {
				return nil, nil, err
			}
			o := parsedOpt{desc: d, name: "--" + d.long}
			switch d.arg {
			case noArg:
				if hasVal {
					return nil, nil, fmt.Errorf("option `--%s' doesn't allow an argument", d.long)
				}
			case reqArg:
				if hasVal {
					o.value = val
				} else if i+1 < len(args) {
					i++
					o.value = args[i]
				} else {
					return nil, nil, fmt.Errorf("option `--%s' requires an argument %s", d.long, d.argName)
				}
			case optArg:
				o.value, o.has = val, hasVal
			}
			opts = append(opts, o)
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				d := findShort(descs, a[j])
				if d == nil {
					return nil, nil, fmt.Errorf("unrecognized option `-%c'", a[j])
				}
				o := parsedOpt{desc: d, name: "-" + string(a[j])}
				if d.arg == reqArg {
					if j+1 < len(a) {
						o.value = a[j+1:]
					} else if i+1 < len(args) {
						i++
						o.value = args[i]
					} else {
						return nil, nil, fmt.Errorf("option `-%c' requires an argument %s", a[j], d.argName)
					}
					opts = append(opts, o)
					break
				}
				opts = append(opts, o)
			}
		default:
			rest = append(rest, a)
		}
	}
	return opts, rest, nil
}

func findLong(descs []optDesc, name string) (*optDesc, error) {
	var matches []*optDesc
	for i := range descs {
		if descs[i].long == name {
			return &descs[i], nil
		}
		if strings.HasPrefix(descs[i].long, name) {
			matches = append(matches, &descs[i])
		}
	}
	switch len(matches) {
	case 0:
		return nil, fmt.Errorf("unrecognized option `--%s'", name)
	case 1:
		return matches[0], nil
	}
	var names []string
	for _, m := range matches {
		names = append(names, "--"+m.long)
	}
	return nil, fmt.Errorf("option `--%s' is ambiguous; could be one of: %s", name, strings.Join(names, ", "))
}

func findShort(descs []optDesc, c byte) *optDesc {
	for i := range descs {
		if descs[i].short == c {
			return &descs[i]
		}
	}
	return nil
}

// usageInfo lists the options sorted by long name.
func usageInfo(header string, descs []optDesc) string {
	sorted := append([]optDesc(nil), descs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].long < sorted[j].long })
	var b strings.Builder
	b.WriteString(header)
	b.WriteString("\n")
	type row struct{ s, l, h string }
	var rows []row
	ws, wl := 0, 0
	for _, d := range sorted {
		var r row
		if d.short != 0 {
			r.s = "-" + string(d.short)
			if d.arg == reqArg {
				r.s += " " + d.argName
			}
		}
		r.l = "--" + d.long
		switch d.arg {
		case reqArg:
			r.l += "=" + d.argName
		case optArg:
			r.l += "[=" + d.argName + "]"
		}
		r.h = d.help
		ws, wl = max(ws, len(r.s)), max(wl, len(r.l))
		rows = append(rows, r)
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "  %-*s  %-*s  %s\n", ws, r.s, wl, r.l, r.h)
	}
	return b.String()
}
