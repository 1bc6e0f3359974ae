#!/usr/bin/env python3
"""Builds the Zarr v3 golden stores in v3/ by hand, byte by byte, from the
examples and rules of the Zarr v3 specification (core, bytes, transpose,
gzip, zstd, crc32c, sharding_indexed, default and v2 chunk key encodings).
No Zarr library is involved, so the stores test mmapkit's reader against
the specification itself. Each store NAME.zarr has NAME.expect beside it:
the values of its array (for a group, of each array in the order a reader
visits them) in C order, little-endian.

Run from this directory: python3 make_v3.py   (needs numpy and numcodecs)
"""
import json, os, shutil, struct, zlib, gzip as gz
import numpy as np
from numcodecs import Zstd

def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF

def put(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'wb') as f:
        f.write(data)

def meta(path, doc):
    put(os.path.join(path, 'zarr.json'), json.dumps(doc, indent=4).encode())

def encode(block, codecs):
    """Encodes a chunk (a numpy array of the chunk shape) with a v3 codec list."""
    a = block
    out = None
    for c in codecs:
        name, cfg = c['name'], c.get('configuration', {})
        if name == 'transpose':
            a = np.transpose(a, cfg['order'])
        elif name == 'bytes':
            dt = a.dtype.newbyteorder('>' if cfg.get('endian') == 'big' else '<')
            out = np.ascontiguousarray(a).astype(dt).tobytes()
        elif name == 'gzip':
            out = gz.compress(out, compresslevel=cfg['level'], mtime=0)
        elif name == 'zstd':
            out = Zstd(level=cfg['level']).encode(out)
        elif name == 'crc32c':
            out = out + struct.pack('<I', crc32c(out))
        else:
            raise ValueError(name)
    return out

def chunks(a, shape, fill):
    """Yields (grid index, full chunk padded with fill) over the array a."""
    grid = [-(-n // c) for n, c in zip(a.shape, shape)]
    for idx in np.ndindex(*grid):
        block = np.full(shape, fill, dtype=a.dtype)
        sl = tuple(slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(idx, shape, a.shape))
        part = a[sl]
        block[tuple(slice(0, s) for s in part.shape)] = part
        yield idx, block

def key(idx, enc):
    sep = enc.get('configuration', {}).get('separator', '/' if enc['name'] == 'default' else '.')
    if enc['name'] == 'default':
        return sep.join(['c'] + [str(i) for i in idx])
    return sep.join(str(i) for i in idx) if idx else '0'

def array(path, a, chunk, codecs, fill, fill_json, enc=None, skip=(), extra=None, dtype_name=None):
    enc = enc or {'name': 'default', 'configuration': {'separator': '/'}}
    doc = {'zarr_format': 3, 'node_type': 'array', 'shape': list(a.shape),
           'data_type': dtype_name or str(a.dtype),
           'chunk_grid': {'name': 'regular', 'configuration': {'chunk_shape': list(chunk)}},
           'chunk_key_encoding': enc, 'fill_value': fill_json, 'codecs': codecs}
    doc.update(extra or {})
    meta(path, doc)
    for idx, block in chunks(a, chunk, fill):
        if idx in skip:
            continue
        put(os.path.join(path, key(idx, enc)), encode(block, codecs))

def sharded_array(path, a, shard, inner, inner_codecs, fill, fill_json, location='end', empty=(), index_crc=True):
    index_codecs = [{'name': 'bytes', 'configuration': {'endian': 'little'}}] + ([{'name': 'crc32c'}] if index_crc else [])
    codecs = [{'name': 'sharding_indexed', 'configuration': {
        'chunk_shape': list(inner), 'codecs': inner_codecs,
        'index_codecs': index_codecs, 'index_location': location}}]
    enc = {'name': 'default', 'configuration': {'separator': '/'}}
    meta(path, {'zarr_format': 3, 'node_type': 'array', 'shape': list(a.shape), 'data_type': str(a.dtype),
                'chunk_grid': {'name': 'regular', 'configuration': {'chunk_shape': list(shard)}},
                'chunk_key_encoding': enc, 'fill_value': fill_json, 'codecs': codecs})
    per = [s // c for s, c in zip(shard, inner)]
    n = int(np.prod(per))
    index_len = 16 * n + (4 if index_crc else 0)
    for sidx, sblock in chunks(a, shard, fill):
        body, entries = b'', []
        base = index_len if location == 'start' else 0
        for iidx in np.ndindex(*per):
            gidx = tuple(s * p + i for s, p, i in zip(sidx, per, iidx))
            outside = any(g * c >= d for g, c, d in zip(gidx, inner, a.shape))
            if outside or gidx in empty:
                entries.append((2**64 - 1, 2**64 - 1))
                continue
            block = sblock[tuple(slice(i * c, (i + 1) * c) for i, c in zip(iidx, inner))]
            data = encode(block, inner_codecs)
            entries.append((base + len(body), len(data)))
            body += data
        index = b''.join(struct.pack('<QQ', o, m) for o, m in entries)
        if index_crc:
            index += struct.pack('<I', crc32c(index))
        put(os.path.join(path, key(sidx, enc)), index + body if location == 'start' else body + index)

def expect(name, *arrays):
    with open(os.path.join('v3', name + '.expect'), 'wb') as f:
        for a in arrays:
            f.write(np.ascontiguousarray(a).astype(a.dtype.newbyteorder('<')).tobytes())

def main():
    shutil.rmtree('v3', ignore_errors=True)
    os.makedirs('v3')
    le = lambda: {'name': 'bytes', 'configuration': {'endian': 'little'}}

    # The core specification's array example, smaller: float64, "NaN" fill,
    # dimension_names, attributes; chunk (1, 0) missing.
    a = np.arange(30, dtype='<f8').reshape(6, 5) / 4
    a[4:6, 0:2] = np.nan
    array('v3/spec_example.zarr', a, (4, 2), [le()], np.nan, 'NaN', skip={(1, 0)},
          extra={'dimension_names': ['rows', 'columns'], 'attributes': {'foo': 42, 'bar': 'apples', 'baz': [1, 2, 3, 4]}})
    expect('spec_example', a)

    # Big-endian int32, chunks stored transposed (Fortran order), gzip,
    # default keys with "." separator.
    b = (np.arange(35, dtype='<i4').reshape(5, 7) - 10) * 1000003
    array('v3/transpose_big_gzip.zarr', b, (2, 3),
          [{'name': 'transpose', 'configuration': {'order': [1, 0]}},
           {'name': 'bytes', 'configuration': {'endian': 'big'}},
           {'name': 'gzip', 'configuration': {'level': 1}}], 0, 0,
          enc={'name': 'default', 'configuration': {'separator': '.'}})
    expect('transpose_big_gzip', b)

    # uint16 with the v2 chunk key encoding, zstd then crc32c, a 3-d
    # array transposed by a permutation that is neither C nor F.
    c = np.arange(4 * 3 * 5, dtype='<u2').reshape(4, 3, 5) * 7
    array('v3/v2keys_zstd_crc.zarr', c, (3, 2, 4),
          [{'name': 'transpose', 'configuration': {'order': [2, 0, 1]}}, le(),
           {'name': 'zstd', 'configuration': {'level': 3, 'checksum': False}}, {'name': 'crc32c'}], 0, 0,
          enc={'name': 'v2', 'configuration': {'separator': '/'}})
    expect('v2keys_zstd_crc', c)

    # Sharded, index at the end with its crc32c, raw inner chunks (each a
    # mappable block), an empty inner chunk inside the array and shards
    # overhanging the edge; fill value 7.
    d = np.arange(36, dtype='<f4').reshape(6, 6)
    d[0:2, 2:4] = 7
    sharded_array('v3/sharded_end.zarr', d, (4, 4), (2, 2), [le()], 7, 7, empty={(0, 1)})
    expect('sharded_end', d)

    # Sharded, index at the start, inner chunks transposed, gzip'd and
    # checksummed, int64.
    e = np.arange(5 * 9, dtype='<i8').reshape(5, 9) - 20
    sharded_array('v3/sharded_start.zarr', e, (4, 6), (2, 3),
                  [{'name': 'transpose', 'configuration': {'order': [1, 0]}}, le(),
                   {'name': 'gzip', 'configuration': {'level': 5}}, {'name': 'crc32c'}], -1, -1, location='start')
    expect('sharded_start', e)

    # A group: float16, complex64 with [re, im] fill, bool with fill true,
    # float32 with a hex NaN fill, a 0-d int8, nested groups.
    meta('v3/group.zarr', {'zarr_format': 3, 'node_type': 'group', 'attributes': {'title': 'golden'}})
    meta('v3/group.zarr/sub', {'zarr_format': 3, 'node_type': 'group'})
    f16 = (np.arange(10, dtype='<f2') - 3) / 2
    array('v3/group.zarr/half', f16, (4,), [le()], 0, 0)
    c64 = (np.arange(6) + 1j * np.arange(6)[::-1]).astype('<c8').reshape(2, 3)
    c64[1, 2] = complex(1, np.nan)
    array('v3/group.zarr/sub/cplx', c64, (1, 2), [le()], complex(1, np.nan), [1.0, 'NaN'], skip={(1, 1)})
    flags = np.array([True, False, True, True, True, True, True])
    array('v3/group.zarr/sub/flags', flags, (3,), [le()], True, True, skip={(1,)})
    hexf = np.array([1.5, -2, np.nan, np.nan], dtype='<f4')
    array('v3/group.zarr/hexfill', hexf, (2,), [le()], np.nan, '0x7fc00000', skip={(1,)})
    scalar = np.array(-5, dtype='<i1')
    array('v3/group.zarr/scalar', scalar, (), [le()], 0, 0)
    expect('group', f16, hexf, scalar, c64, flags)

main()
