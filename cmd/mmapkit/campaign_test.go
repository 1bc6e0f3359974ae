package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"github.com/mmapkit/mmapkit/internal/shareddata"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// golden is a real file of one format and what reading it needs.
type golden struct {
	path  string   // a file, or a store directory
	ext   string   // the extension a copy must carry
	flags []string // reading flags (SciDB's format string)
	side  []string // sidecar suffixes copied along (".meta")
}

// goldenFiles collects the small golden files of every format: the
// packages' own testdata and the upstream files under ../shared/testdata.
func goldenFiles(t *testing.T) []golden {
	var out []golden
	add := func(pattern, ext string, flags []string, side ...string) {
		m, _ := filepath.Glob(pattern)
		sort.Strings(m)
		for _, p := range m {
			if fi, err := os.Stat(p); err == nil && fi.Size() <= 64<<10 {
				out = append(out, golden{p, ext, flags, side})
			}
		}
	}
	add("../../abf/testdata/*.abf", ".abf", nil)
	add("../../npy/testdata/*.npy", ".npy", nil)
	add("../../npy/testdata/*.npz", ".npz", nil)
	add("../../scidb/testdata/alltypes.scidb", ".scidb", []string{"--scidb-format", "(bool, char null, int8, int16 null, int32, int64 null, uint8, uint16 null, uint32, uint64 null, float, double null, datetime, datetimetz null, string, string null, binary null, string(5) null, binary(3), skip(2), skip null)"})
	add("../../scidb/testdata/flatArray.scidb", ".scidb", []string{"--scidb-format", "(int8, int16 null, string null, string)"})
	add("../../csvtable/testdata/*.csv", ".csv", nil)
	if shareddata.Available() || shareddata.Required() {
		dir := shareddata.Path(t)
		add(filepath.Join(dir, "daphne", "*.dbdf"), ".dbdf", nil, ".meta")
		// DAPHNE's CSV (no header line: the first row names the columns).
		add(filepath.Join(dir, "daphne", "*.csv"), ".csv", nil)
		add(filepath.Join(dir, "futhark", "generated", "all-types.bin"), ".in", nil)
		add(filepath.Join(dir, "futhark", "generated", "futhark", "tests", "scatter", "data", "tiny.in.*"), ".in", nil)
		add(filepath.Join(dir, "hdf5", "*.h5"), ".h5", nil)
		add(filepath.Join(dir, "hdf5", "*.nc"), ".nc", nil)
	} else {
		t.Log("../shared/testdata is absent: the campaign runs on the packages' own golden files only")
	}
	m, _ := filepath.Glob("../../zarr/testdata/v3/*.zarr")
	for _, p := range m {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			out = append(out, golden{path: p, ext: ".zarr"})
		}
	}
	return out
}

// mutate returns a damaged copy of b: cut short, a bit flipped, a byte set
// to an extreme, a run of bytes zeroed or set, or bytes inserted.
func mutate(rng *rand.Rand, b []byte) []byte {
	if len(b) == 0 {
		return []byte{byte(rng.Intn(256))}
	}
	c := append([]byte(nil), b...)
	i := rng.Intn(len(c))
	switch rng.Intn(6) {
	case 0:
		return c[:i]
	case 1:
		c[i] ^= 1 << rng.Intn(8)
	case 2:
		c[i] = []byte{0, 0xff, 0x7f, 0x80}[rng.Intn(4)]
	case 3:
		n := min(len(c)-i, 1+rng.Intn(8))
		v := byte(0xff * rng.Intn(2))
		for k := 0; k < n; k++ {
			c[i+k] = v
		}
	case 4:
		return append(c[:i:i], append(bytes.Repeat([]byte{byte(rng.Intn(256))}, 1+rng.Intn(16)), b[i:]...)...)
	case 5:
		// An 8-byte field set to a huge value (sizes, counts, offsets).
		if i+8 <= len(c) {
			copy(c[i:], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
		}
	}
	return c
}

// mutateText returns a damaged copy of text b (CSV) where the damage is
// in its syntax: a quote, comma, line break, CR or byte-order mark set or
// inserted, a number made huge or odd, a line doubled or dropped.
func mutateText(rng *rand.Rand, b []byte) []byte {
	pieces := []string{`"`, `,`, "\n", "\r", "\r\n", "\xef\xbb\xbf", `""`, `"a,b"`, "-", "e", "9999999999999999999",
		"18446744073709551616", "9007199254740993", "1e400", "nan", "-inf", "true", "", "\x00", "\xff"}
	if len(b) == 0 {
		return []byte(pieces[rng.Intn(len(pieces))])
	}
	i := rng.Intn(len(b))
	p := []byte(pieces[rng.Intn(len(pieces))])
	switch rng.Intn(4) {
	case 0: // replace one byte
		return append(append(append([]byte(nil), b[:i]...), p...), b[min(i+1, len(b)):]...)
	case 1: // insert
		return append(append(append([]byte(nil), b[:i]...), p...), b[i:]...)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	k := rng.Intn(len(lines))
	var out []byte
	for n, l := range lines {
		if n != k {
			out = append(out, l...)
		} else if rng.Intn(2) == 0 { // doubled; else dropped
			out = append(append(out, l...), l...)
		}
	}
	return out
}

// treeHash hashes every file below path (or the file itself).
func treeHash(t *testing.T, path string) string {
	h := sha256.New()
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", strings.TrimPrefix(p, path), len(b))
		h.Write(b)
		return nil
	})
	require.NoError(t, err)
	return fmt.Sprintf("%x", h.Sum(nil))
}

// copyTree copies a file or a directory.
func copyTree(t *testing.T, from, to string) {
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	require.NoError(t, err)
}

// runBounded runs the binary with a time limit and returns its result
// and its peak resident set (KiB; 0 where the OS does not say).
func runBounded(t *testing.T, limit time.Duration, args ...string) (result, int64, bool) {
	cmd := exec.Command(mkBin, append([]string{"--quiet"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timedOut := false
	select {
	case <-done:
	case <-time.After(limit):
		timedOut = true
		cmd.Process.Kill()
		<-done
	}
	return result{out.String(), errb.String(), cmd.ProcessState.ExitCode()}, peakRSS(cmd.ProcessState), timedOut
}

// TestHostileCampaign mutates the golden file of every format and runs
// every command on each mutant: the exit status is 0, 1 or 2, no run
// panics or dies of a signal, each ends in bounded time and memory, a
// failed conversion leaves no output and no temporary file, no command
// but set and repair changes its input, a command that fails (set and
// repair included) leaves every file byte for byte as it was, and a set
// that succeeds changes only its element's bytes. go test runs a few mutants of each
// file; MMAPKIT_LONG=1 runs many, MMAPKIT_CAMPAIGN_EXT=.csv only the
// golden files of that extension, MMAPKIT_CAMPAIGN_SEED=N other mutants.
func TestHostileCampaign(t *testing.T) {
	if testing.Short() {
		t.Skip("the campaign runs the binary hundreds of times")
	}
	files := goldenFiles(t)
	if ext := os.Getenv("MMAPKIT_CAMPAIGN_EXT"); ext != "" {
		// Only the golden files of one extension (".csv").
		files = slices.DeleteFunc(files, func(g golden) bool { return g.ext != ext })
	}
	require.NotEmpty(t, files)
	perFile := 3
	if os.Getenv("MMAPKIT_LONG") != "" {
		perFile = 60
	}
	targets := []string{".abf", ".in", ".dbdf", ".csv", ".npy", ".zarr", ".scidb"}
	seed := int64(1)
	if v := os.Getenv("MMAPKIT_CAMPAIGN_SEED"); v != "" {
		var err error
		seed, err = strconv.ParseInt(v, 10, 64)
		require.NoError(t, err, "MMAPKIT_CAMPAIGN_SEED")
	}
	rng := rand.New(rand.NewSource(seed))
	runs, failures, sets := 0, 0, 0
	goldenTargets := map[string]setPlace{}
	for _, g := range files {
		fi, err := os.Stat(g.path)
		require.NoError(t, err)
		for k := 0; k < perFile; k++ {
			dir := t.TempDir()
			in := filepath.Join(dir, "in"+g.ext)
			if fi.IsDir() {
				copyTree(t, g.path, in)
				// Damage one file of the store.
				var members []string
				filepath.WalkDir(in, func(p string, d fs.DirEntry, err error) error {
					if err == nil && !d.IsDir() {
						members = append(members, p)
					}
					return nil
				})
				if len(members) > 0 {
					p := members[rng.Intn(len(members))]
					b, _ := os.ReadFile(p)
					require.NoError(t, os.WriteFile(p, mutate(rng, b), 0o644))
				}
			} else {
				b, err := os.ReadFile(g.path)
				require.NoError(t, err)
				if g.ext == ".csv" && rng.Intn(2) == 0 {
					b = mutateText(rng, b)
				} else {
					b = mutate(rng, b)
				}
				require.NoError(t, os.WriteFile(in, b, 0o644))
				for _, s := range g.side {
					if sb, err := os.ReadFile(g.path + s); err == nil {
						if rng.Intn(2) == 0 {
							sb = mutate(rng, sb)
						}
						require.NoError(t, os.WriteFile(in+s, sb, 0o644))
					}
				}
			}
			before := treeHash(t, dir)
			var cmds [][]string
			cmds = append(cmds, append(append([]string{"ls"}, g.flags...), in), append(append([]string{"ls", "--json"}, g.flags...), in),
				append(append([]string{"cat"}, g.flags...), in))
			for _, ext := range targets {
				cmds = append(cmds, append(append([]string{"convert"}, g.flags...), in, filepath.Join(dir, "out"+ext)))
			}
			var listing []byte // what ls --json printed, if it succeeded
			for n, args := range cmds {
				r, rss, timedOut := runBounded(t, 60*time.Second, args...)
				runs++
				if n == 1 && r.code == 0 {
					listing = []byte(r.stdout)
				}
				name := fmt.Sprintf("%s (mutant %d of %s)", strings.Join(args, " "), k, g.path)
				ok := assert.False(t, timedOut, "%s: did not end within 60 s", name) &&
					assert.Contains(t, []int{0, 1, 2}, r.code, "%s: exit status %d, stderr %q", name, r.code, r.stderr) &&
					assert.NotRegexp(t, `panic|goroutine [0-9]+ \[|SIGSEGV|SIGBUS|fatal error`, r.stderr, name)
				if rss > 0 {
					ok = assert.Less(t, rss, int64(1<<20), "%s: peak RSS %d KiB", name, rss) && ok
				}
				if r.code != 0 {
					failures++
					ok = assert.True(t, strings.HasPrefix(r.stderr, "mmapkit: "), "%s: %q", name, r.stderr) && ok
				}
				if args[0] == "convert" {
					out := args[len(args)-1]
					if r.code != 0 {
						_, err := os.Stat(out)
						ok = assert.True(t, os.IsNotExist(err), "%s failed but left %s", name, out) && ok
					}
					os.RemoveAll(out)
					os.RemoveAll(out + ".meta")
				}
				ents, _ := os.ReadDir(dir)
				for _, e := range ents {
					ok = assert.False(t, strings.Contains(e.Name(), ".tmp"), "%s left %s", name, e.Name()) && ok
				}
				ok = assert.Equal(t, before, treeHash(t, dir), "%s changed its input", name) && ok
				if !ok {
					t.FailNow()
				}
			}
			// set of the first element of a record the mutant lists (else
			// one of the golden file's, else "0"): it may fail, never
			// crash; if it fails it changes nothing, and if it succeeds it
			// changes only that element's bytes (and an .npz member's
			// CRC-32s), where the listing says where they are.
			target := setTarget(g, in, listing, goldenTargets)
			var inBytes []byte
			if !fi.IsDir() {
				inBytes, _ = os.ReadFile(in)
			}
			r, _, timedOut := runBounded(t, 60*time.Second, append(append([]string{"set"}, g.flags...), in, target.name, target.index, "1")...)
			runs++
			name := fmt.Sprintf("set %s %s %s 1 (mutant %d of %s)", in, target.name, target.index, k, g.path)
			ok := assert.False(t, timedOut, name) &&
				assert.Contains(t, []int{0, 1, 2}, r.code, "%s: %s", name, r.stderr) &&
				assert.NotRegexp(t, `panic|goroutine [0-9]+ \[|SIGSEGV|SIGBUS|fatal error`, r.stderr, name)
			if r.code != 0 {
				failures++
				ok = assert.Equal(t, before, treeHash(t, dir), "%s failed (%s) but changed the file", name, r.stderr) && ok
			} else if target.size > 0 && inBytes != nil {
				ok = assertOnlyElementChanged(t, name, inBytes, in, target) && ok
				sets++
			}
			// repair: it may cut, never crash, and changes nothing when
			// it fails.
			before = treeHash(t, dir)
			r, _, timedOut = runBounded(t, 60*time.Second, append(append([]string{"repair"}, g.flags...), in)...)
			runs++
			name = fmt.Sprintf("repair %s (mutant %d of %s)", in, k, g.path)
			ok = assert.False(t, timedOut, name) &&
				assert.Contains(t, []int{0, 1, 2}, r.code, "%s: %s", name, r.stderr) &&
				assert.NotRegexp(t, `panic|goroutine [0-9]+ \[|SIGSEGV|SIGBUS|fatal error`, r.stderr, name) && ok
			if r.code != 0 {
				failures++
				ok = assert.Equal(t, before, treeHash(t, dir), "%s failed (%s) but changed the file", name, r.stderr) && ok
			}
			if !ok {
				t.FailNow()
			}
		}
	}
	t.Logf("%d golden files, %d mutants each, %d runs, %d of them refused the input (exit 1 or 2); %d successful sets checked byte for byte", len(files), perFile, runs, failures, sets)
}

// setPlace is what set changes in the campaign: the first element of a
// record, and where its bytes are (size 0 where the listing does not say).
type setPlace struct {
	name, index string
	offset      int64
	size        int64
	npz         bool
}

// elemSizes are the byte sizes of the element types whose first element
// lies at a record's listed offset ("bits": the byte of its first bit).
var elemSizes = map[string]int64{"i8": 1, "u8": 1, "bool": 1, "bits": 1, "i16": 2, "u16": 2, "f16": 2,
	"i32": 4, "u32": 4, "f32": 4, "char": 4, "i64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16, "i128": 16, "u128": 16}

// listTarget is the first array record in a listing (ls --json's
// output) of path, if it lists one.
func listTarget(listing []byte, path string) (setPlace, bool) {
	var l struct {
		Records []struct {
			Name   string
			Type   string
			Shape  []int64
			Offset *int64
			Nbytes int64
		}
	}
	if json.Unmarshal(bytes.SplitN(listing, []byte("\n"), 2)[0], &l) != nil {
		return setPlace{}, false
	}
	for _, r := range l.Records {
		if r.Nbytes == 0 || strings.ContainsRune(r.Name, 0) { // no argument can hold a NUL
			continue
		}
		zeros := make([]string, len(r.Shape))
		for i := range zeros {
			zeros[i] = "0"
		}
		p := setPlace{name: r.Name, index: "[" + strings.Join(zeros, ",") + "]", npz: strings.HasSuffix(path, ".npz")}
		if r.Offset != nil && *r.Offset >= 0 {
			p.offset, p.size = *r.Offset, elemSizes[r.Type]
		}
		return p, true
	}
	return setPlace{}, false
}

// setTarget picks what set changes in a mutant: a record its listing
// shows, else one of its golden file's (listed once), else "0" at [0].
func setTarget(g golden, in string, listing []byte, cache map[string]setPlace) setPlace {
	if p, ok := listTarget(listing, in); ok {
		return p
	}
	p, ok := cache[g.path]
	if !ok {
		out, _ := exec.Command(mkBin, append(append([]string{"--quiet", "ls", "--json"}, g.flags...), g.path)...).Output()
		if p, ok = listTarget(out, g.path); !ok {
			p = setPlace{name: "0", index: "[0]"}
		}
		p.size = 0 // the golden file's offsets say nothing of the mutant's
		cache[g.path] = p
	}
	return p
}

// assertOnlyElementChanged checks a successful set: the file keeps its
// size, and every byte that changed is the element's (or, in an .npz, one
// of the member's two CRC-32s: at most 8 bytes outside the element).
func assertOnlyElementChanged(t *testing.T, name string, before []byte, path string, p setPlace) bool {
	after, err := os.ReadFile(path)
	if !assert.NoError(t, err, name) || !assert.Len(t, after, len(before), "%s changed the file's size", name) {
		return false
	}
	outside := 0
	for i := range after {
		if after[i] != before[i] && (int64(i) < p.offset || int64(i) >= p.offset+p.size) {
			outside++
		}
	}
	if p.npz {
		return assert.LessOrEqual(t, outside, 8, "%s changed %d bytes outside the element at [%d, %d) and the CRC-32s", name, outside, p.offset, p.offset+p.size)
	}
	return assert.Zero(t, outside, "%s changed %d bytes outside the element at [%d, %d)", name, outside, p.offset, p.offset+p.size)
}
