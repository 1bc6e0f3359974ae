package main

import (
	"runtime/debug"
	"strings"
)

// version says which build of mmapkit this is, from what the go command
// recorded in the binary: the module's version where it was built from a
// tagged module ("v1.2.3"), else the VCS revision and whether the work
// tree had uncommitted changes ("devel 0123456789ab, modified"), as
// `go version -m` would show them.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (built without module information)"
	}
	return versionOf(info)
}

func versionOf(info *debug.BuildInfo) string {
	v := info.Main.Version
	var rev, modified, when string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		case "vcs.time":
			when = s.Value
		}
	}
	if v != "" && v != "(devel)" && !strings.Contains(v, "+dirty") {
		return v + ", " + info.GoVersion
	}
	out := "devel"
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		out += " " + rev
		if when != "" {
			out += " of " + when
		}
		if modified == "true" {
			out += ", modified"
		}
	} else if v != "" && v != "(devel)" {
		out += " " + v
	}
	return out + ", " + info.GoVersion
}
