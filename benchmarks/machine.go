package benchmarks

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

func machine(o *resolved) Machine {
	m := Machine{
		Date:       time.Now().UTC().Format(time.RFC3339),
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
		CPUs:       runtime.NumCPU(),
		GoVersion:  runtime.Version(),
		Size:       o.Size,
		RandomSize: o.RandomSize,
		Quick:      o.Quick,
	}
	m.CPUModel = procField("/proc/cpuinfo", "model name")
	if kb := procField("/proc/meminfo", "MemTotal"); kb != "" {
		if n, err := strconv.ParseInt(strings.TrimSuffix(kb, " kB"), 10, 64); err == nil {
			m.MemTotal = n * 1024
		}
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			m.LoadAverage, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	return m
}

// procField returns the value of the first "key: value" line of a /proc
// file, or "" where there is none (other systems).
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
