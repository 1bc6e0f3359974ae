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
		LLC:        o.llc,
	}
	m.CPUModel = procField("/proc/cpuinfo", "model name")
	m.MemTotal = memTotal()
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			m.LoadAverage, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	return m
}

// procField returns the value of the first "key: value" line of a /proc
// file, or "" where there is none (other systems).
// memTotal is the machine's memory in bytes, 0 where unknown.
func memTotal() int64 {
	if kb := procField("/proc/meminfo", "MemTotal"); kb != "" {
		if n, err := strconv.ParseInt(strings.TrimSuffix(kb, " kB"), 10, 64); err == nil {
			return n * 1024
		}
	}
	return 0
}

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

// lastLevelCache returns the size in bytes of the CPU's last-level cache,
// as Linux describes cpu0's caches in sysfs, or 0 where it cannot tell.
func lastLevelCache() int64 {
	return lastLevelCacheIn("/sys/devices/system/cpu/cpu0/cache")
}

func lastLevelCacheIn(dir string) int64 {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	level, size := 0, int64(0)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "index") {
			continue
		}
		read := func(name string) string {
			b, _ := os.ReadFile(dir + "/" + e.Name() + "/" + name)
			return strings.TrimSpace(string(b))
		}
		if t := read("type"); t == "Instruction" {
			continue
		}
		l, err := strconv.Atoi(read("level"))
		if err != nil {
			continue
		}
		n, ok := parseCacheSize(read("size"))
		if ok && (l > level || l == level && n > size) {
			level, size = l, n
		}
	}
	return size
}

// parseCacheSize parses sysfs' cache sizes: "32768K", "512K", "8M".
func parseCacheSize(s string) (int64, bool) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n * mult, true
}
