package benchmarks

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
)

// Unit is the unit of a figure's value; it is also the figure's JSON key
// for the value.
type Unit string

const (
	GBps   Unit = "gbps" // gigabytes (1e9 bytes) per second
	MBps   Unit = "mbps" // megabytes (1e6 bytes) per second
	Micros Unit = "us"   // microseconds (a latency: lower is better)
)

// Results is the document Run prints with Options.JSON:
//
//	{"machine": {...},
//	 "ceilings": {"ram_scan": GBps, "mmap_scan": GBps, "mmap_scan_f32": GBps,
//	              "mmap_scan_parallel": GBps, "read": GBps, "cold_read": GBps,
//	              "memmove": GBps, "gather": GBps, "write_sync": GBps,
//	              "cp_sync": GBps},
//	 "figures": [{"name": ..., "gbps"|"mbps"|"us": value, "ceiling": ...,
//	              "ratio": ..., "goal": ..., "met": ..., "also": {...},
//	              "meaningful": ..., ...}, ...]}
//
// Every figure of the suite is present, in a fixed order; values, ratios
// and ceilings that were not measured are null, and the figure's note
// says why.
type Results struct {
	Machine  Machine  `json:"machine"`
	Ceilings Ceilings `json:"ceilings"`
	Figures  []Figure `json:"figures"`
	// Sweep holds the throughput of the scan figures at several file
	// sizes; it is measured only for a report and drawn in its chart.
	Sweep []SweepPoint `json:"-"`
}

// Machine describes where and how the suite ran.
type Machine struct {
	Date       string `json:"date"` // RFC 3339, UTC
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPUs       int    `json:"cpus"`
	CPUModel   string `json:"cpu_model"`
	MemTotal   int64  `json:"mem_total_bytes"` // 0 if unknown
	GoVersion  string `json:"go_version"`
	Size       int64  `json:"size_bytes"`        // Options.Size as resolved
	RandomSize int64  `json:"random_size_bytes"` // Options.RandomSize as resolved
	Quick      bool   `json:"quick"`
	// LoadAverage is the 1-minute load average when the run began
	// (/proc/loadavg; 0 where unknown): a figure taken on a busy machine
	// says so.
	LoadAverage float64 `json:"load_average"`
	// LLC is the size in bytes of the last-level cache
	// (/sys/devices/system/cpu/cpu0/cache; 0 where unknown). Scans and
	// copies of files that fit in it measure the cache, not memory.
	LLC int64 `json:"llc_bytes"`
}

// Ceilings are the machine's best rates, in GB/s, measured in the same run
// as the figures. A nil field was not measured.
type Ceilings struct {
	RAMScan          *float64 `json:"ram_scan"`           // summing an in-memory []float64
	MmapScan         *float64 `json:"mmap_scan"`          // summing a raw mapping of the file as float64 (warm)
	MmapScanF32      *float64 `json:"mmap_scan_f32"`      // the same as float32, the ceiling of float32 views
	MmapScanParallel *float64 `json:"mmap_scan_parallel"` // a raw mapping of the file summed by every core
	Read             *float64 `json:"read"`               // read(2) of the file into a reused buffer (warm)
	ColdRead         *float64 `json:"cold_read"`          // read(2) after posix_fadvise(DONTNEED)
	Memmove          *float64 `json:"memmove"`            // copy() between two in-memory slices
	Gather           *float64 `json:"gather"`             // splitting interleaved 16-byte records into two columns, in memory
	WriteSync        *float64 `json:"write_sync"`         // write(2) of the bytes to a new file + fsync
	CpSync           *float64 `json:"cp_sync"`            // copying a file to a new one + fsync (cp src dst && sync dst)
}

// Figure is one measured figure.
//
// Ratio is oriented so that higher is better for mmapkit. For an mmapkit
// figure it is the figure against its ceiling (value/ceiling for a
// throughput, ceiling/value for a latency). For a peer figure (Peer: a
// way of doing the same job without mmapkit) Ceiling names the mmapkit
// figure doing that job and Ratio is mmapkit's lead over the peer. Goal is
// the target for Ratio, or for the value itself when GoalOf is "value".
type Figure struct {
	Name    string   // stable identifier, e.g. "view_scan_f64"
	Title   string   // what was measured, in words
	Unit    Unit     // unit of Value
	Value   *float64 // nil: not measured
	Ceiling string   // name of the ceiling or figure Ratio is taken against; "" if none
	Ratio   *float64 // nil: not measured or no reference
	// CeilingValue is the ceiling as measured beside the figure, which
	// Ratio is taken against (the ceiling's own value is the best of the
	// whole run); nil where Ratio uses the ceiling's or figure's value.
	// For an edit, the median latency of pwrite + fdatasync beside it.
	CeilingValue *float64
	Goal         *float64 // nil: the issue sets none
	GoalOf       string   // "ratio" or "value"
	Peer         bool     // a non-mmapkit way of doing the same job
	Bytes        int64    // bytes processed per repetition (0 for per-element latencies)
	Note         string   // why a value is missing, or a caveat
	// Also holds the figure's ratios against further references, by
	// name, oriented as Ratio is (SciDB's decode against memmove beside
	// its gather ceiling).
	Also map[string]float64
	// Meaningful is false when the ratio measures something else than
	// the figure means to: a scan of a file that fits in the last-level
	// cache compares caches, not memory. Met is then nil.
	Meaningful bool
}

// Met reports whether the figure reaches its goal; nil if it has no goal
// or was not measured.
func (f *Figure) Met() *bool {
	if f.Goal == nil || !f.Meaningful {
		return nil
	}
	x := f.Ratio
	if f.GoalOf == "value" {
		x = f.Value
		if x != nil && f.Unit == Micros {
			ok := *x <= *f.Goal
			return &ok
		}
	}
	if x == nil {
		return nil
	}
	ok := *x >= *f.Goal
	return &ok
}

// MarshalJSON writes the value under the key named by the unit.
func (f Figure) MarshalJSON() ([]byte, error) {
	m := []kv{
		{"name", f.Name},
		{"title", f.Title},
		{string(f.Unit), f.Value},
		{"ceiling", nullString(f.Ceiling)},
		{"ceiling_value", f.CeilingValue},
		{"ratio", f.Ratio},
		{"goal", f.Goal},
		{"goal_of", f.GoalOf},
		{"met", f.Met()},
		{"peer", f.Peer},
		{"bytes", f.Bytes},
		{"note", f.Note},
		{"also", f.Also},
		{"meaningful", f.Meaningful},
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, p := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p.k)
		v, err := json.Marshal(p.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

type kv struct {
	k string
	v any
}

func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// SweepPoint is one figure's throughput at one file size.
type SweepPoint struct {
	Figure string
	Size   int64
	GBps   float64
}

func ptr(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// ceilingMap names the ceilings as figures refer to them.
func (c *Ceilings) byName() map[string]*float64 {
	return map[string]*float64{
		"ram_scan":           c.RAMScan,
		"mmap_scan":          c.MmapScan,
		"mmap_scan_f32":      c.MmapScanF32,
		"mmap_scan_parallel": c.MmapScanParallel,
		"read":               c.Read,
		"cold_read":          c.ColdRead,
		"memmove":            c.Memmove,
		"gather":             c.Gather,
		"write_sync":         c.WriteSync,
		"cp_sync":            c.CpSync,
	}
}

// ceilingOrder is the order ceilings are printed in.
var ceilingOrder = []string{"ram_scan", "mmap_scan", "mmap_scan_f32", "mmap_scan_parallel", "read", "cold_read", "memmove", "gather", "write_sync", "cp_sync"}

// computeRatios fills every figure's Ratio from its value and its
// reference's, and its Also ratios from theirs.
func (res *Results) computeRatios() {
	refs := res.Ceilings.byName()
	units := map[string]Unit{}
	for k := range refs {
		units[k] = GBps
	}
	for i := range res.Figures {
		f := &res.Figures[i]
		refs[f.Name] = f.Value
		units[f.Name] = f.Unit
	}
	ratio := func(f *Figure, name string) *float64 {
		ref := refs[name]
		if ref == nil || *ref == 0 || f.Value == nil || *f.Value == 0 || units[name] != f.Unit {
			return nil
		}
		r := *f.Value / *ref // value over reference, throughput sense
		if f.Unit == Micros {
			r = 1 / r
		}
		if f.Peer {
			r = 1 / r
		}
		return ptr(r)
	}
	for i := range res.Figures {
		f := &res.Figures[i]
		if f.Ratio == nil && f.Ceiling != "" {
			f.Ratio = ratio(f, f.Ceiling)
		}
		for name := range f.Also {
			if r := ratio(f, name); r != nil {
				f.Also[name] = *r
			} else {
				delete(f.Also, name)
			}
		}
		if len(f.Also) == 0 {
			f.Also = nil
		}
	}
}

// figure returns the figure named name, or nil.
func (res *Results) figure(name string) *Figure {
	for i := range res.Figures {
		if res.Figures[i].Name == name {
			return &res.Figures[i]
		}
	}
	return nil
}

func fmtNum(x *float64) string {
	if x == nil {
		return "-"
	}
	switch v := *x; {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 0.1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

func unitLabel(u Unit) string {
	switch u {
	case GBps:
		return "GB/s"
	case MBps:
		return "MB/s"
	case Micros:
		return "µs"
	}
	return string(u)
}

func (f *Figure) valueText() string {
	if f.Value == nil {
		return "not measured"
	}
	return fmtNum(f.Value) + " " + unitLabel(f.Unit)
}

func (f *Figure) ratioText() string {
	if f.Ratio == nil {
		return "-"
	}
	return fmtNum(f.Ratio) + "×"
}

func (f *Figure) goalText() string {
	if f.Goal == nil {
		return "-"
	}
	if f.GoalOf == "value" {
		op := "≥ "
		if f.Unit == Micros {
			op = "≤ "
		}
		return op + fmtNum(f.Goal) + " " + unitLabel(f.Unit)
	}
	return "≥ " + fmtNum(f.Goal) + "×"
}

func (f *Figure) metText() string {
	m := f.Met()
	switch {
	case m == nil:
		return ""
	case *m:
		return "yes"
	}
	return "no"
}

// noteText is the note, after the Also ratios ("memmove 0.30×").
func (f *Figure) noteText() string {
	var parts []string
	names := make([]string, 0, len(f.Also))
	for name := range f.Also {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		r := f.Also[name]
		parts = append(parts, name+" "+fmtNum(&r)+"×")
	}
	if f.Note != "" {
		parts = append(parts, f.Note)
	}
	return strings.Join(parts, "; ")
}

func (f *Figure) vsText() string {
	switch {
	case f.Ceiling == "":
		return "-"
	case f.Peer && f.CeilingValue != nil:
		return "lead of " + f.Ceiling + " " + fmtNum(f.CeilingValue)
	case f.Peer:
		return "lead of " + f.Ceiling
	case f.CeilingValue != nil:
		return f.Ceiling + " " + fmtNum(f.CeilingValue)
	}
	return f.Ceiling
}

// WriteTable prints the ceilings and the figures as an aligned text table.
func (res *Results) WriteTable(w io.Writer) error {
	var buf strings.Builder
	if err := res.writeTable(&buf); err != nil {
		return err
	}
	lines := strings.Split(buf.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

func (res *Results) writeTable(w io.Writer) error {
	m := res.Machine
	fmt.Fprintf(w, "%s  %s/%s, %d CPUs, %s, %s RAM, load %.2f; file %s, random-access file %s\n\n",
		m.Date, m.OS, m.Arch, m.CPUs, orUnknown(m.CPUModel), humanOrUnknown(m.MemTotal), m.LoadAverage, HumanSize(m.Size), HumanSize(m.RandomSize))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "ceiling\tGB/s\n")
	refs := res.Ceilings.byName()
	for _, name := range ceilingOrder {
		v := fmtNum(refs[name])
		if refs[name] == nil {
			v = "not measured"
		}
		fmt.Fprintf(tw, "%s\t%s\n", name, v)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "figure\tvalue\tceiling\tratio\tgoal\tmet\tnote\n")
	for i := range res.Figures {
		f := &res.Figures[i]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.Name, f.valueText(), f.vsText(), f.ratioText(), f.goalText(), f.metText(), f.noteText())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return res.writeLegend(w, false)
}

// legend says how to read the figures' table.
const legend = `How to read this: value is the figure's measurement, in GB/s unless its name says otherwise (_us:
microseconds, _s: seconds). ceiling is what the machine itself does on the same bytes in the same
run (a raw mapping scan, memmove, read(2), write(2), cp + sync, ...; the ceilings table above), and
ratio is value / ceiling, higher being better; for a peer figure (numpy_, zarr_python_, h5py_, ...)
ratio is mmapkit's lead over the peer instead. A ceiling is a reference way of doing the same work,
not a physical bound: a figure above it is possible (a view reads pages in place where read(2)
copies them, a warm cache beats a cold one). goal is the ratio the project aims for on an idle
machine; met says whether this run reached it. A "no" is not an error, and bench exits 0: it says
that here, now, the figure fell short, often because the machine was busy (see the load average).`

// writeLegend writes the legend, each figure's name with what it measures,
// and how many goals this run met.
func (res *Results) writeLegend(w io.Writer, markdown bool) error {
	text := legend
	if markdown {
		text = strings.ReplaceAll(text, "\n", " ")
	}
	fmt.Fprintf(w, "%s\n\n", text)
	var met, missed []string
	for i := range res.Figures {
		f := &res.Figures[i]
		if m := f.Met(); m != nil {
			if *m {
				met = append(met, f.Name)
			} else {
				missed = append(missed, f.Name)
			}
		}
	}
	summary := fmt.Sprintf("%d of %d goals met", len(met), len(met)+len(missed))
	if len(missed) > 0 {
		summary += "; not met: " + strings.Join(missed, ", ")
	}
	fmt.Fprintf(w, "%s.\n\n", summary)
	if markdown {
		fmt.Fprintf(w, "| figure | what it measures |\n|---|---|\n")
		for i := range res.Figures {
			fmt.Fprintf(w, "| %s | %s |\n", res.Figures[i].Name, strings.ReplaceAll(res.Figures[i].Title, "|", "\\|"))
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "figure\twhat it measures\n")
	for i := range res.Figures {
		fmt.Fprintf(tw, "%s\t%s\n", res.Figures[i].Name, res.Figures[i].Title)
	}
	return tw.Flush()
}

// WriteJSON prints the Results document as indented JSON.
func (res *Results) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(res)
}
