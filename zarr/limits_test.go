package zarr

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
)

// TestGroupOpenMemoryFollowsItsMetadata: opening a group of many small
// arrays reads each document into one reused buffer, parses each
// document once for all the arrays it describes alike (in version 3, but
// for their attributes), keeps an array's path, shared metadata and
// compact attributes, and describes records on demand: the memory it
// allocates, and the memory it keeps, stay a small multiple of the
// metadata's bytes. With a record, a parse and maps of its own per array
// it allocated 24 times the compact group's metadata and kept 5.5 times
// it.
func TestGroupOpenMemoryFollowsItsMetadata(t *testing.T) {
	const arrays = 3000
	for _, c := range []struct {
		name            string
		docs            func(i int) map[string]string
		allocated, kept float64 // bounds, per byte of metadata
	}{
		{"compact v2", func(i int) map[string]string {
			return map[string]string{".zarray": `{"chunks":[10],"compressor":null,"dtype":"<f8","fill_value":0.0,"filters":null,"order":"C","shape":[10],"zarr_format":2}`}
		}, 10, 1},
		{"indented v2 with .zattrs", func(i int) map[string]string {
			return map[string]string{
				".zarray": "{\n    \"chunks\": [\n        10\n    ],\n    \"compressor\": {\n        \"id\": \"zlib\",\n        \"level\": 1\n    },\n    \"dtype\": \"<f8\",\n    \"fill_value\": \"NaN\",\n    \"filters\": null,\n    \"order\": \"C\",\n    \"shape\": [\n        10\n    ],\n    \"zarr_format\": 2\n}",
				".zattrs": fmt.Sprintf("{\n    \"_ARRAY_DIMENSIONS\": [\n        \"x\"\n    ],\n    \"index\": %d,\n    \"long_name\": \"array number %d\",\n    \"units\": \"m\"\n}", i, i),
			}
		}, 6, 1},
		{"v3 with attributes", func(i int) map[string]string {
			return map[string]string{"zarr.json": v3Array("0.0", `, {"name": "zstd", "configuration": {"level": 0, "checksum": false}}`,
				fmt.Sprintf(`, "attributes": {"units": "m", "index": %d}, "dimension_names": ["x"]`, i))}
		}, 4, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "g.zarr")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			write := func(name, doc string) int {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(doc), 0o644))
				return len(doc)
			}
			metadata := 0
			if _, ok := c.docs(0)["zarr.json"]; ok {
				metadata += write("zarr.json", `{"zarr_format":3,"node_type":"group"}`)
			} else {
				metadata += write(".zgroup", `{"zarr_format":2}`)
			}
			for i := range arrays {
				require.NoError(t, os.Mkdir(filepath.Join(dir, fmt.Sprint("a", i)), 0o755))
				for name, doc := range c.docs(i) {
					metadata += write(fmt.Sprint("a", i, "/", name), doc)
				}
			}
			var before, opened, kept runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			f, err := format.Open(dir, nil)
			require.NoError(t, err)
			runtime.ReadMemStats(&opened)
			runtime.GC()
			runtime.ReadMemStats(&kept)
			defer f.Close()
			allocated, held := opened.TotalAlloc-before.TotalAlloc, kept.HeapAlloc-before.HeapAlloc
			t.Logf("%d bytes of metadata: %d allocated (%.1f per byte), %d kept (%.2f per byte)",
				metadata, allocated, float64(allocated)/float64(metadata), held, float64(held)/float64(metadata))
			require.Equal(t, arrays, format.NumRecords(f))
			last := format.RecordAt(f, arrays-1)
			assert.Equal(t, "/a999", last.Name) // in name order
			assert.Equal(t, layout.F64, last.Type)
			if c.name == "compact v2" {
				assert.Equal(t, "chunks [10], raw", last.Extra["storage"])
				assert.Equal(t, "0.0", string(last.Facts.FillValue))
			} else {
				assert.Equal(t, 999.0, last.Facts.Attributes["index"])
				assert.Equal(t, []string{"x"}, last.Facts.DimensionNames)
			}
			if raceEnabled {
				t.Skip("the race detector's sync.Pool drops what is put back, on purpose: the bounds are for normal builds")
			}
			assert.LessOrEqual(t, float64(allocated), c.allocated*float64(metadata)+256<<10)
			assert.LessOrEqual(t, float64(held), c.kept*float64(metadata)+256<<10)
		})
	}
}

// TestManyArraysWrittenInBoundedMemory: writing a store of many small
// arrays reads each record when its array is planned, parses each
// document back once for the arrays described alike, keeps one meta for
// them, and writes the consolidated metadata member by member: the
// memory allocated per array stays a few kilobytes. Records listed at
// once, a parse, a meta and maps of attributes per array, and the
// consolidated metadata marshalled whole took 9 KB (version 2) and 19.5 KB (version 3) an array.
func TestManyArraysWrittenInBoundedMemory(t *testing.T) {
	const arrays = 2000
	src := &memSource{}
	for i := range arrays {
		src.add(fmt.Sprint("g/a", i), layout.F32, []int64{5}, layout.RowMajor, false, ramp(layout.F32, 5, float64(i)))
		src.Records()[i].Facts = &format.Facts{Attributes: map[string]any{"units": "m", "index": float64(i)}, FillValue: []byte("0")}
	}
	for _, version := range []int{2, 3} {
		out := filepath.Join(t.TempDir(), "m.zarr")
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		require.NoError(t, Write(out, src, &Options{Version: version}))
		runtime.ReadMemStats(&after)
		perArray := float64(after.TotalAlloc-before.TotalAlloc) / arrays
		t.Logf("version %d: %.0f bytes allocated per array", version, perArray)
		s, err := Open(out, nil)
		require.NoError(t, err)
		require.Equal(t, arrays, format.NumRecords(s))
		i, err := format.Find(s, "g/a1999")
		require.NoError(t, err)
		last := format.RecordAt(s, i)
		assert.Equal(t, 1999.0, last.Facts.Attributes["index"])
		assert.Equal(t, ramp(layout.F32, 5, 1999), readAll(t, s, i))
		s.Close()
		if !raceEnabled {
			assert.Less(t, perArray, map[int]float64{2: 7000, 3: 12000}[version], "version %d", version)
		}
	}
}
