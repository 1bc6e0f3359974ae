package zarr

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// meta is one array's metadata, version-neutral: everything reading and
// writing need, checked.
type meta struct {
	version int
	path    string // key prefix of the array, without a trailing "/" ("" for a root array)
	name    string // zarr-python's name: "/" or "/group/name"
	metaKey string // key of the metadata document (".zarray", "temp/zarr.json")

	shape []int64
	grid  []int64 // the chunk grid's chunk shape (the shard shape when sharded)
	dt    dtype
	fill  []byte // one element in the stored byte order
	// noFill writes fill_value null in version 2: every chunk is
	// written, and xarray would read elements equal to a fill value as
	// missing (NaN).
	noFill bool

	// A unit is what is decoded at once: a chunk, or an inner chunk of a
	// shard.
	unit  []int64
	perm  []int   // storage order of a unit: C order over axes perm[0], perm[1], …
	chain []codec // bytes→bytes codecs of a unit, in encoding order
	shard *shardSpec

	sep         string // chunk key separator
	defaultKeys bool   // v3 "default" chunk key encoding: "c" prefix

	attrs      map[string]any
	dims       []string
	compressor json.RawMessage // v2's "compressor", for listings
	codecs     json.RawMessage // v3's "codecs", for listings
	fillJSON   json.RawMessage
}

// shardSpec is the layout of a sharded array's shard files.
type shardSpec struct {
	perShard []int64 // inner chunks per shard along each axis
	n        int64   // inner chunks per shard
	atStart  bool    // index at the start of the file (else the end)
	crc      bool    // index followed by its crc32c
	big      bool    // index entries big-endian
}

// indexLen is the size of a shard's index in bytes.
func (s *shardSpec) indexLen() int64 {
	n := s.n * 16
	if s.crc {
		n += 4
	}
	return n
}

// unitBytes is the decoded size of one unit.
func (m *meta) unitBytes() int64 {
	n, _ := layout.ByteSize(m.dt.typ, m.unit)
	return n
}

// byteOrder is the byte order of the stored elements.
func (m *meta) byteOrder() binary.ByteOrder {
	if m.dt.big {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// colMajor reports whether units are stored in Fortran order.
func (m *meta) colMajor() bool {
	k := len(m.perm)
	for i, p := range m.perm {
		if p != k-1-i {
			return false
		}
	}
	return k >= 2
}

// rowMajor reports whether units are stored in C order.
func (m *meta) rowMajor() bool {
	for i, p := range m.perm {
		if p != i {
			return false
		}
	}
	return true
}

// zarrayDoc is .zarray.
type zarrayDoc struct {
	ZarrFormat json.RawMessage `json:"zarr_format"`
	Shape      []int64         `json:"shape"`
	Chunks     []int64         `json:"chunks"`
	Dtype      json.RawMessage `json:"dtype"`
	Compressor json.RawMessage `json:"compressor"`
	FillValue  json.RawMessage `json:"fill_value"`
	Order      string          `json:"order"`
	Filters    json.RawMessage `json:"filters"`
	Separator  *string         `json:"dimension_separator"`
}

// decodeJSON decodes a metadata document; errors name the byte offset
// where the JSON breaks when there is one. A document that ends inside its
// JSON (a file cut short) is an error wrapping mmapfile.ErrTruncated.
func decodeJSON(b []byte, v any) (int64, error) {
	err := json.Unmarshal(b, v)
	switch e := err.(type) {
	case nil:
		return -1, nil
	case *json.SyntaxError:
		if e.Offset == int64(len(b)) {
			return e.Offset, fmt.Errorf("not JSON: %v: %w", e, mmapfile.ErrTruncated)
		}
		return e.Offset, fmt.Errorf("not JSON: %v", e)
	case *json.UnmarshalTypeError:
		return e.Offset, fmt.Errorf("field %q: %s is not %v", e.Field, e.Value, e.Type)
	}
	return -1, err
}

// invalid is the sentinel of metadata that decodeJSON refused: ErrInvalid,
// which for a document cut short also wraps mmapfile.ErrTruncated.
func invalid(err error) error {
	if errors.Is(err, mmapfile.ErrTruncated) {
		return errInvalidCut
	}
	return ErrInvalid
}

var errInvalidCut = fmt.Errorf("%w: %w", ErrInvalid, mmapfile.ErrTruncated)

// metaError is a problem in a metadata document: the message and the
// byte offset it is about (-1 if none).
type metaError struct {
	off int64
	msg string
	err error
}

func (e *metaError) Error() string { return e.msg }

func bad(format string, a ...any) *metaError {
	return &metaError{off: -1, msg: fmt.Sprintf(format, a...), err: ErrInvalid}
}

func unsupported(format string, a ...any) *metaError {
	return &metaError{off: -1, msg: fmt.Sprintf(format, a...), err: ErrUnsupported}
}

// parseV2 parses .zarray (and the array's attributes).
func parseV2(doc []byte, attrs map[string]any) (*meta, *metaError) {
	var z zarrayDoc
	if off, err := decodeJSON(doc, &z); err != nil {
		return nil, &metaError{off: off, msg: err.Error(), err: invalid(err)}
	}
	if string(bytes.TrimSpace(z.ZarrFormat)) != "2" {
		return nil, bad("zarr_format is %s, not 2", clip(z.ZarrFormat))
	}
	m := &meta{version: 2, attrs: attrs, compressor: z.Compressor, fillJSON: z.FillValue}
	if z.Shape == nil || z.Chunks == nil {
		return nil, bad("shape and chunks are required")
	}
	if err := m.setGrid(z.Shape, z.Chunks); err != nil {
		return nil, err
	}
	dt, err := parseDtypeV2(z.Dtype)
	if err != nil {
		return nil, bad("%v", err)
	}
	m.dt = dt
	m.unit = m.grid
	switch z.Order {
	case "C":
		m.perm = identity(len(m.shape))
	case "F":
		m.perm = reversed(len(m.shape))
	default:
		return nil, bad("order %q is neither \"C\" nor \"F\"", z.Order)
	}
	m.sep = "."
	if z.Separator != nil {
		if *z.Separator != "." && *z.Separator != "/" {
			return nil, bad("dimension_separator %q is neither \".\" nor \"/\"", *z.Separator)
		}
		m.sep = *z.Separator
	}
	if f := bytes.TrimSpace(z.Filters); len(f) > 0 && string(f) != "null" && string(f) != "[]" {
		var list []struct {
			ID string `json:"id"`
		}
		json.Unmarshal(f, &list)
		names := []string{}
		for _, x := range list {
			names = append(names, strconv.Quote(x.ID))
		}
		return nil, unsupported("filters %s are not supported (%s)", clip(f), strings.Join(names, ", "))
	}
	if c := bytes.TrimSpace(z.Compressor); len(c) > 0 && string(c) != "null" {
		var cfg struct {
			ID    string `json:"id"`
			Level *int   `json:"level"`
		}
		if err := json.Unmarshal(c, &cfg); err != nil || cfg.ID == "" {
			return nil, bad("compressor %s has no id", clip(c))
		}
		m.chain = []codec{v2Codec(cfg.ID, cfg.Level)}
		if cfg.ID == "blosc" {
			bc, err := bloscCodec(c, m.dt.typ.Size())
			if err != nil {
				return nil, err
			}
			m.chain = []codec{bc}
		}
		if merr := checkLevel(m.chain[0]); merr != nil {
			return nil, merr
		}
	}
	if m.dt.typ.Valid() {
		fill, err := parseFill(z.FillValue, m.dt.typ, m.byteOrder())
		if err != nil {
			return nil, bad("%v", err)
		}
		m.fill = fill
	}
	m.dims = attrDims(attrs, len(m.shape))
	return m, nil
}

// attrDims are the axis names xarray keeps in the attribute
// _ARRAY_DIMENSIONS, or nil where it holds no list of rank names.
func attrDims(attrs map[string]any, rank int) []string {
	d, ok := attrs["_ARRAY_DIMENSIONS"].([]any)
	if !ok || len(d) != rank {
		return nil
	}
	var dims []string
	for _, x := range d {
		s, _ := x.(string)
		dims = append(dims, s)
	}
	return dims
}

// v2Codec is the codec of a v2 compressor id.
func v2Codec(id string, level *int) codec {
	c := codec{name: id}
	if level != nil {
		c.level = *level
	}
	switch id {
	case "zlib", "gzip", "zstd", "lz4", "blosc", "crc32c":
	default:
		c.unsupported = "this package reads zlib, gzip, zstd, lz4 and blosc"
	}
	return c
}

// checkLevel refuses a compression level its codec does not have: a
// chunk re-encoded by Set is written at that level.
func checkLevel(c codec) *metaError {
	lo, hi := 0, 0
	switch c.name {
	case "zlib", "gzip":
		lo, hi = -1, 9
	case "zstd":
		lo, hi = -1<<17, 22 // zstd's negative levels are its fastest
	default:
		return nil
	}
	if c.level < lo || c.level > hi {
		return bad("%s level %d is not %d to %d", c.name, c.level, lo, hi)
	}
	return nil
}

// setGrid checks and sets the shape and the chunk grid's chunk shape.
func (m *meta) setGrid(shape, chunks []int64) *metaError {
	if len(chunks) != len(shape) {
		return bad("chunks %v and shape %v differ in rank", chunks, shape)
	}
	if len(shape) > 32 {
		return bad("rank %d is more than 32", len(shape))
	}
	for i := range shape {
		if shape[i] < 0 {
			return bad("shape %v: dimension %d is negative", shape, i)
		}
		if chunks[i] <= 0 {
			return bad("chunks %v: dimension %d is not positive", chunks, i)
		}
	}
	if _, err := layout.Count(shape); err != nil {
		return bad("shape %v: element count overflows", shape)
	}
	if _, err := layout.ByteSize(layout.C128, chunks); err != nil {
		return bad("chunks %v: a chunk's size overflows", chunks)
	}
	m.shape, m.grid = shape, chunks
	return nil
}

func identity(k int) []int {
	p := make([]int, k)
	for i := range p {
		p[i] = i
	}
	return p
}

func reversed(k int) []int {
	p := make([]int, k)
	for i := range p {
		p[i] = k - 1 - i
	}
	return p
}

// extension is a v3 extension point: {"name": …, "configuration": {…}}
// or a bare name.
type extension struct {
	Name   string          `json:"name"`
	Config json.RawMessage `json:"configuration"`
	Must   *bool           `json:"must_understand"`
}

func parseExtension(raw json.RawMessage) (extension, error) {
	var e extension
	if json.Unmarshal(raw, &e.Name) == nil {
		return e, nil
	}
	if err := json.Unmarshal(raw, &e); err != nil || e.Name == "" {
		return e, fmt.Errorf("%s is neither a name nor an object with one", clip(raw))
	}
	return e, nil
}

// zarrJSONKnown are the members of zarr.json this package understands.
var zarrJSONKnown = map[string]bool{
	"zarr_format": true, "node_type": true, "shape": true, "data_type": true, "chunk_grid": true,
	"chunk_key_encoding": true, "fill_value": true, "codecs": true, "attributes": true,
	"dimension_names": true, "storage_transformers": true, "consolidated_metadata": true,
}

// zarrJSONDoc is zarr.json.
type zarrJSONDoc struct {
	ZarrFormat   json.RawMessage   `json:"zarr_format"`
	NodeType     string            `json:"node_type"`
	Shape        []int64           `json:"shape"`
	DataType     json.RawMessage   `json:"data_type"`
	ChunkGrid    json.RawMessage   `json:"chunk_grid"`
	KeyEncoding  json.RawMessage   `json:"chunk_key_encoding"`
	FillValue    json.RawMessage   `json:"fill_value"`
	Codecs       []json.RawMessage `json:"codecs"`
	Attributes   map[string]any    `json:"attributes"`
	DimNames     []*string         `json:"dimension_names"`
	Transformers []json.RawMessage `json:"storage_transformers"`
	Consolidated json.RawMessage   `json:"consolidated_metadata"`
}

// parseNodeV3 parses zarr.json far enough to tell a group from an array.
func parseNodeV3(doc []byte) (*zarrJSONDoc, *metaError) {
	var z zarrJSONDoc
	if off, err := decodeJSON(doc, &z); err != nil {
		return nil, &metaError{off: off, msg: err.Error(), err: invalid(err)}
	}
	if string(bytes.TrimSpace(z.ZarrFormat)) != "3" {
		return nil, bad("zarr_format is %s, not 3", clip(z.ZarrFormat))
	}
	if z.NodeType != "array" && z.NodeType != "group" {
		return nil, bad("node_type %q is neither \"array\" nor \"group\"", z.NodeType)
	}
	if k := unknownMember(doc); k != "" {
		return nil, unsupported("member %q is not understood here (and is not marked \"must_understand\": false)", k)
	}
	return &z, nil
}

// unknownMember returns a member of the JSON object doc that is neither
// known nor marked "must_understand": false, or "". The members are first
// listed without copying their values: a group's consolidated metadata
// may hold the documents of thousands of arrays.
func unknownMember(doc []byte) string {
	var keys map[string]skipJSON
	json.Unmarshal(doc, &keys)
	unknown := false
	for k := range keys {
		unknown = unknown || !zarrJSONKnown[k]
	}
	if !unknown {
		return ""
	}
	var all map[string]json.RawMessage
	json.Unmarshal(doc, &all)
	for k, v := range all {
		if zarrJSONKnown[k] {
			continue
		}
		var must struct {
			Must *bool `json:"must_understand"`
		}
		if json.Unmarshal(v, &must) != nil || must.Must == nil || *must.Must {
			return k
		}
	}
	return ""
}

// skipJSON decodes any JSON value into nothing.
type skipJSON struct{}

func (skipJSON) UnmarshalJSON([]byte) error { return nil }

// parseV3 parses an array's zarr.json.
func parseV3(z *zarrJSONDoc) (*meta, *metaError) {
	m := &meta{version: 3, attrs: z.Attributes, fillJSON: z.FillValue}
	if z.Shape == nil {
		return nil, bad("shape is required")
	}
	grid, err := parseExtension(z.ChunkGrid)
	if err != nil {
		return nil, bad("chunk_grid: %v", err)
	}
	if grid.Name != "regular" {
		return nil, unsupported("chunk_grid %q is not supported (only \"regular\")", grid.Name)
	}
	var gc struct {
		ChunkShape []int64 `json:"chunk_shape"`
	}
	if err := json.Unmarshal(grid.Config, &gc); err != nil || gc.ChunkShape == nil {
		return nil, bad("chunk_grid: configuration.chunk_shape is required")
	}
	if err := m.setGrid(z.Shape, gc.ChunkShape); err != nil {
		return nil, err
	}
	dt, derr := parseDtypeV3(z.DataType)
	if derr != nil {
		return nil, bad("%v", derr)
	}
	m.dt = dt
	keys, err := parseExtension(z.KeyEncoding)
	if err != nil {
		return nil, bad("chunk_key_encoding: %v", err)
	}
	var kc struct {
		Separator *string `json:"separator"`
	}
	if len(keys.Config) > 0 {
		json.Unmarshal(keys.Config, &kc)
	}
	switch keys.Name {
	case "default":
		m.defaultKeys, m.sep = true, "/"
	case "v2":
		m.sep = "."
	default:
		return nil, unsupported("chunk_key_encoding %q is not supported (only \"default\" and \"v2\")", keys.Name)
	}
	if kc.Separator != nil {
		if *kc.Separator != "/" && *kc.Separator != "." {
			return nil, bad("chunk_key_encoding: separator %q is neither \"/\" nor \".\"", *kc.Separator)
		}
		m.sep = *kc.Separator
	}
	if len(z.Transformers) > 0 {
		return nil, unsupported("storage_transformers are not supported")
	}
	if len(z.Codecs) == 0 {
		return nil, bad("codecs is empty (it needs an array-to-bytes codec)")
	}
	codecsJSON, _ := json.Marshal(z.Codecs)
	m.codecs = codecsJSON
	c, merr := parseCodecsV3(z.Codecs, len(m.shape), m.dt, true)
	if merr != nil {
		return nil, merr
	}
	m.dt.big = c.big
	m.perm, m.chain, m.unit = c.perm, c.chain, m.grid
	if c.shard != nil {
		for i := range m.grid {
			if c.inner[i] <= 0 || m.grid[i]%c.inner[i] != 0 {
				return nil, bad("sharding_indexed: inner chunk shape %v does not divide the shard shape %v", c.inner, m.grid)
			}
		}
		m.unit = c.inner
		m.shard = c.shard
		m.shard.perShard = make([]int64, len(m.grid))
		m.shard.n = 1
		for i := range m.grid {
			m.shard.perShard[i] = m.grid[i] / c.inner[i]
			m.shard.n *= m.shard.perShard[i]
		}
		if m.shard.n > 1<<27 {
			return nil, bad("sharding_indexed: %d inner chunks per shard is more than %d", m.shard.n, 1<<27)
		}
	}
	if m.dt.typ.Valid() {
		if len(bytes.TrimSpace(z.FillValue)) == 0 {
			return nil, bad("fill_value is required")
		}
		fill, err := parseFill(z.FillValue, m.dt.typ, m.byteOrder())
		if err != nil {
			return nil, bad("%v", err)
		}
		m.fill = fill
	}
	if z.DimNames != nil {
		if len(z.DimNames) != len(m.shape) {
			return nil, bad("dimension_names has %d names for rank %d", len(z.DimNames), len(m.shape))
		}
		for _, d := range z.DimNames {
			s := ""
			if d != nil {
				s = *d
			}
			m.dims = append(m.dims, s)
		}
	} else {
		m.dims = attrDims(z.Attributes, len(m.shape))
	}
	return m, nil
}

// chainV3 is a parsed v3 codec list.
type chainV3 struct {
	perm  []int
	big   bool
	chain []codec
	shard *shardSpec
	inner []int64
}

// parseCodecsV3 parses a v3 codec list for arrays of rank k: transposes,
// one array→bytes codec (bytes, or sharding_indexed where allowed), then
// bytes→bytes codecs.
func parseCodecsV3(list []json.RawMessage, k int, dt dtype, allowShard bool) (chainV3, *metaError) {
	c := chainV3{perm: identity(k)}
	stage := 0 // 0: array→array, 1: bytes→bytes
	for i, raw := range list {
		e, err := parseExtension(raw)
		if err != nil {
			return c, bad("codecs[%d]: %v", i, err)
		}
		switch {
		case e.Name == "transpose" && stage == 0:
			var tc struct {
				Order []int `json:"order"`
			}
			if err := json.Unmarshal(e.Config, &tc); err != nil || len(tc.Order) != k || !isPermutation(tc.Order) {
				return c, bad("codecs[%d]: transpose order %s is not a permutation of 0…%d", i, clip(e.Config), k-1)
			}
			next := make([]int, k)
			for j := range next {
				next[j] = c.perm[tc.Order[j]]
			}
			c.perm = next
		case e.Name == "bytes" && stage == 0:
			var bc struct {
				Endian *string `json:"endian"`
			}
			if len(e.Config) > 0 {
				json.Unmarshal(e.Config, &bc)
			}
			if bc.Endian != nil && *bc.Endian != "little" && *bc.Endian != "big" {
				return c, bad("codecs[%d]: bytes endian %q is neither \"little\" nor \"big\"", i, *bc.Endian)
			}
			if bc.Endian == nil && dt.typ.Size() > 1 {
				return c, bad("codecs[%d]: bytes needs \"endian\" for %s", i, dt.typeName())
			}
			c.big = bc.Endian != nil && *bc.Endian == "big" && dt.typ.Size() > 1
			stage = 1
		case e.Name == "sharding_indexed" && stage == 0:
			if !allowShard {
				return c, unsupported("codecs[%d]: sharding_indexed inside a shard is not supported", i)
			}
			if !slices.Equal(c.perm, identity(k)) || i != len(list)-1 {
				return c, unsupported("codecs[%d]: sharding_indexed with other codecs around it is not supported", i)
			}
			var sc struct {
				ChunkShape  []int64           `json:"chunk_shape"`
				Codecs      []json.RawMessage `json:"codecs"`
				IndexCodecs []json.RawMessage `json:"index_codecs"`
				Location    *string           `json:"index_location"`
			}
			if err := json.Unmarshal(e.Config, &sc); err != nil || len(sc.ChunkShape) != k || len(sc.Codecs) == 0 || len(sc.IndexCodecs) == 0 {
				return c, bad("codecs[%d]: sharding_indexed needs chunk_shape of rank %d, codecs and index_codecs", i, k)
			}
			inner, merr := parseCodecsV3(sc.Codecs, k, dt, false)
			if merr != nil {
				merr.msg = "sharding_indexed: " + merr.msg
				return c, merr
			}
			spec := &shardSpec{}
			if sc.Location != nil {
				switch *sc.Location {
				case "start":
					spec.atStart = true
				case "end":
				default:
					return c, bad("codecs[%d]: index_location %q is neither \"start\" nor \"end\"", i, *sc.Location)
				}
			}
			idx, merr := parseCodecsV3(sc.IndexCodecs, k+1, dtype{typ: layout.U64}, false)
			if merr != nil {
				merr.msg = "sharding_indexed index_codecs: " + merr.msg
				return c, merr
			}
			if !slices.Equal(idx.perm, identity(k+1)) || len(idx.chain) > 1 || len(idx.chain) == 1 && idx.chain[0].name != "crc32c" {
				return c, unsupported("codecs[%d]: sharding_indexed index_codecs %s are not supported (bytes, optionally followed by crc32c)", i, clip(mustJSON(sc.IndexCodecs)))
			}
			spec.crc, spec.big = len(idx.chain) == 1, idx.big
			c.perm, c.big, c.chain, c.shard, c.inner = inner.perm, inner.big, inner.chain, spec, sc.ChunkShape
			stage = 2
		case stage == 1:
			cc, merr := v3Codec(e, i, dt)
			if merr == nil {
				merr = checkLevel(cc)
			}
			if merr != nil {
				return c, merr
			}
			c.chain = append(c.chain, cc)
		default:
			if stage == 2 {
				return c, unsupported("codecs[%d]: %q after sharding_indexed is not supported", i, e.Name)
			}
			return c, bad("codecs[%d]: %q is not an array-to-array or array-to-bytes codec here (known: transpose, bytes, sharding_indexed)", i, e.Name)
		}
	}
	if stage == 0 {
		return c, bad("codecs has no array-to-bytes codec (bytes or sharding_indexed)")
	}
	return c, nil
}

// v3Codec is a bytes→bytes codec of version 3.
func v3Codec(e extension, i int, dt dtype) (codec, *metaError) {
	var cfg struct {
		Level *int `json:"level"`
	}
	if len(e.Config) > 0 {
		json.Unmarshal(e.Config, &cfg)
	}
	switch e.Name {
	case "gzip", "zstd", "crc32c":
		return v2Codec(e.Name, cfg.Level), nil
	case "numcodecs.zlib", "numcodecs.gzip", "numcodecs.zstd", "numcodecs.lz4":
		return v2Codec(strings.TrimPrefix(e.Name, "numcodecs."), cfg.Level), nil
	case "blosc", "numcodecs.blosc":
		c, merr := bloscCodec(e.Config, dt.typ.Size())
		if merr != nil {
			merr.msg = fmt.Sprintf("codecs[%d]: %s", i, merr.msg)
		}
		return c, merr
	case "transpose", "bytes", "sharding_indexed":
		return codec{}, bad("codecs[%d]: %q after the array-to-bytes codec", i, e.Name)
	}
	return codec{name: e.Name, unsupported: "this package reads gzip, zstd, blosc, crc32c and numcodecs.zlib/lz4"}, nil
}

func isPermutation(p []int) bool {
	seen := make([]bool, len(p))
	for _, x := range p {
		if x < 0 || x >= len(p) || seen[x] {
			return false
		}
		seen[x] = true
	}
	return true
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// fillOf encodes a fill value given as a Go value or as JSON.
func fillOf(v any, t layout.Type, bo binary.ByteOrder) ([]byte, error) {
	var raw []byte
	switch x := v.(type) {
	case nil:
		return make([]byte, t.Size()), nil
	case json.RawMessage:
		raw = x
	case float64:
		raw = floatJSON(x)
	case float32:
		raw = floatJSON(float64(x))
	case complex128:
		raw = []byte("[" + string(floatJSON(real(x))) + "," + string(floatJSON(imag(x))) + "]")
	case complex64:
		raw = []byte("[" + string(floatJSON(float64(real(x)))) + "," + string(floatJSON(float64(imag(x)))) + "]")
	default:
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return nil, fmt.Errorf("fill value %v: %v", v, err)
		}
	}
	return parseFill(raw, t, bo)
}

func floatJSON(f float64) []byte {
	switch {
	case math.IsNaN(f):
		return []byte(`"NaN"`)
	case math.IsInf(f, 1):
		return []byte(`"Infinity"`)
	case math.IsInf(f, -1):
		return []byte(`"-Infinity"`)
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64)
}

// writeMeta writes the metadata documents: each array's, then the groups',
// the root's last with the consolidated metadata.
func (w *writer) writeMeta() error {
	var all []member // consolidated: key (v2) or path (v3) → document
	groups := map[string]bool{}
	for i, m := range w.arrays {
		for g := path.Dir(m.path); m.path != "" && g != "."; g = path.Dir(g) {
			groups[g] = true
		}
		if w.version == 2 {
			za, zt := join(m.path, ".zarray"), join(m.path, ".zattrs")
			if err := w.putRaw(za, w.docs[i]); err != nil {
				return err
			}
			if err := w.putRaw(zt, w.attrs[i]); err != nil {
				return err
			}
			all = append(all, member{za, w.docs[i]}, member{zt, w.attrs[i]})
			continue
		}
		if err := w.putRaw(join(m.path, "zarr.json"), w.docs[i]); err != nil {
			return err
		}
		all = append(all, member{m.path, w.docs[i]})
	}
	if len(w.arrays) == 1 && w.arrays[0].path == "" {
		return nil
	}
	group := mustJSON(map[string]any{"zarr_format": 3, "node_type": "group", "attributes": map[string]any{}})
	if w.version == 2 {
		group = mustJSON(map[string]any{"zarr_format": 2})
	}
	for g := range groups {
		key, doc := g+"/zarr.json", group
		if w.version == 2 {
			key = g + "/.zgroup"
		}
		all = append(all, member{strings.TrimSuffix(key, "/zarr.json"), doc})
		if err := w.putRaw(key, doc); err != nil {
			return err
		}
	}
	if w.version == 2 {
		all = append(all, member{".zgroup", group})
		if err := w.putRaw(".zgroup", group); err != nil {
			return err
		}
		return w.putConsolidated(".zmetadata", map[string]any{"metadata": consolidated, "zarr_consolidated_format": 1}, all)
	}
	return w.putConsolidated("zarr.json", map[string]any{"zarr_format": 3, "node_type": "group", "attributes": map[string]any{},
		"consolidated_metadata": map[string]any{"kind": "inline", "must_understand": false, "metadata": consolidated}}, all)
}

// member is a member of the consolidated metadata: a key and its
// document, compact JSON.
type member struct {
	key string
	doc json.RawMessage
}

// consolidated stands for the consolidated metadata in the document that
// holds it, which putConsolidated writes in its place.
var consolidated = json.RawMessage("0")

// putConsolidated writes the document doc at key, indented as put indents
// it, with the members in place of consolidated: the object is written
// member by member (sorted as encoding/json sorts a map's keys), never
// held whole, and equals the document a map of them would give.
func (w *writer) putConsolidated(key string, doc map[string]any, members []member) error {
	outer, err := json.MarshalIndent(doc, "", indent)
	if err != nil {
		return err
	}
	at := bytes.Index(outer, []byte(`"metadata": 0`))
	head, tail := outer[:at+len(`"metadata": `)], outer[at+len(`"metadata": 0`):]
	depth := bytes.LastIndexByte(head, '\n')
	inner := strings.Repeat(indent, (at-depth-1)/len(indent)+1) // where the members are
	slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
	return w.st.writeFrom(key, func(out *bufio.Writer) error {
		out.Write(head)
		out.WriteByte('{')
		var buf bytes.Buffer
		for i, m := range members {
			if i > 0 {
				out.WriteByte(',')
			}
			out.WriteString("\n" + inner)
			k, _ := json.Marshal(m.key)
			out.Write(k)
			out.WriteString(": ")
			buf.Reset()
			if err := json.Indent(&buf, m.doc, inner, indent); err != nil {
				return err
			}
			out.Write(buf.Bytes())
		}
		out.WriteString("\n" + inner[len(indent):] + "}")
		out.Write(tail)
		return out.WriteByte('\n')
	})
}

// indent is the indentation of the metadata documents written.
const indent = "    "

// putRaw writes doc, compact JSON from encoding/json, indented.
func (w *writer) putRaw(key string, doc json.RawMessage) error {
	w.indented.Reset()
	if err := json.Indent(&w.indented, doc, "", indent); err != nil {
		return err
	}
	w.indented.WriteByte('\n')
	return w.st.write(key, w.indented.Bytes())
}

// docV2 is an array's .zarray and .zattrs.
func docV2(m *meta) (map[string]any, map[string]any) {
	order := "C"
	if m.colMajor() {
		order = "F"
	}
	var comp any
	if len(m.chain) > 0 {
		comp = map[string]any{"id": m.chain[0].name, "level": m.chain[0].level}
		if o := m.chain[0].blosc; o != nil {
			comp = bloscConfigV2(o)
		}
	}
	za := map[string]any{
		"zarr_format": 2, "shape": m.shape, "chunks": m.unit, "dtype": dtypeV2(m.dt),
		"compressor": comp, "fill_value": format.FillJSON(m.fill, m.dt.typ, m.byteOrder()),
		"order": order, "filters": nil, "dimension_separator": m.sep,
	}
	if m.noFill {
		za["fill_value"] = nil
	}
	return za, m.attrs
}

// docV3 is an array's zarr.json.
func docV3(m *meta) map[string]any {
	endian := "little"
	if m.dt.big {
		endian = "big"
	}
	var codecs []any
	if m.colMajor() {
		codecs = append(codecs, map[string]any{"name": "transpose", "configuration": map[string]any{"order": m.perm}})
	}
	codecs = append(codecs, map[string]any{"name": "bytes", "configuration": map[string]any{"endian": endian}})
	for _, c := range m.chain {
		switch c.name {
		case "zstd":
			codecs = append(codecs, map[string]any{"name": "zstd", "configuration": map[string]any{"level": c.level, "checksum": false}})
		case "gzip":
			codecs = append(codecs, map[string]any{"name": "gzip", "configuration": map[string]any{"level": c.level}})
		case "zlib":
			codecs = append(codecs, map[string]any{"name": "numcodecs.zlib", "configuration": map[string]any{"level": c.level}})
		case "blosc":
			codecs = append(codecs, bloscConfigV3(c.blosc))
		}
	}
	if m.shard != nil {
		codecs = []any{map[string]any{"name": "sharding_indexed", "configuration": map[string]any{
			"chunk_shape": m.unit, "codecs": codecs, "index_location": "end",
			"index_codecs": []any{
				map[string]any{"name": "bytes", "configuration": map[string]any{"endian": "little"}},
				map[string]any{"name": "crc32c"},
			},
		}}}
	}
	keys := "v2"
	if m.defaultKeys {
		keys = "default"
	}
	doc := map[string]any{
		"zarr_format": 3, "node_type": "array", "shape": m.shape, "data_type": dtypeV3(m.dt),
		"chunk_grid":         map[string]any{"name": "regular", "configuration": map[string]any{"chunk_shape": m.grid}},
		"chunk_key_encoding": map[string]any{"name": keys, "configuration": map[string]any{"separator": m.sep}},
		"fill_value":         format.FillJSON(m.fill, m.dt.typ, m.byteOrder()),
		"codecs":             codecs, "attributes": m.attrs,
	}
	if len(m.dims) == len(m.shape) {
		doc["dimension_names"] = m.dims
	}
	return doc
}
