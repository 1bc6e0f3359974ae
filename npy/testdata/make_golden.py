#!/usr/bin/python3
"""Makes the golden .npy and .npz files of package npy's tests, and
golden.json, which says what NumPy reads from each: for every array its
dtype, shape, order, format version and data offset, and its values in C
order (floats as repr strings, complex numbers as [re, im] pairs of them,
bytes and void values in hex, text as text).

Run from npy/testdata with Debian's python3-numpy (1.24):

    /usr/bin/python3 make_golden.py

Most files are what np.save, np.savez and np.savez_compressed write; the
rest are headers NumPy reads but does not write (older alignment, Python 2
longs, other spellings), built by hand below and checked by np.load.
"""
import json
import struct
import warnings
import zipfile

import numpy as np

warnings.simplefilter("ignore")
files = {}


def values(a):
    flat = a.reshape(-1) if a.ndim else a.reshape(1)
    out = []
    for x in flat:
        k = a.dtype.kind
        if k == "b":
            out.append(bool(x))
        elif k in "iu":
            out.append(int(x))
        elif k in "mM":
            out.append(int(x.view("i8")))
        elif k == "f":
            out.append(repr(float(x)))
        elif k == "c":
            out.append([repr(float(x.real)), repr(float(x.imag))])
        elif k == "S":
            out.append(bytes(x).hex())
        elif k == "U":
            out.append(str(x))
        elif k == "V":
            out.append(bytes(x).hex())
    return out


def describe(a, version, offset):
    d = {
        "descr": a.dtype.str if a.dtype.names is None else repr(a.dtype.descr),
        "shape": list(a.shape),
        "fortran_order": bool(a.flags.f_contiguous and not a.flags.c_contiguous),
        "version": version,
        "offset": offset,
    }
    if a.dtype.names is None:
        d["values"] = values(np.ascontiguousarray(a))
    else:
        d["fields"] = {n: values(np.ascontiguousarray(a[n])) for n in a.dtype.names}
    return d


def npy_info(path):
    with open(path, "rb") as f:
        major, minor = np.lib.format.read_magic(f)
        np.lib.format._read_array_header(f, (major, minor), max_header_size=2**20)
        return "%d.%d" % (major, minor), f.tell()


def save(name, a, version=None):
    with open(name, "wb") as f:
        np.lib.format.write_array(f, a, version=version)
    v, off = npy_info(name)
    got = np.load(name, max_header_size=2**20)
    assert got.dtype == a.dtype and got.shape == a.shape and got.tobytes(order="A") == a.tobytes(order="A")
    files[name] = {"arrays": {"0": describe(a, v, off)}}


def raw(name, header, a, version=(1, 0), pad_to=None):
    """A .npy with a header written by hand: text as given (plus padding
    to pad_to, then a newline), then a's bytes."""
    h = header
    fmt = "<H" if version == (1, 0) else "<I"
    pre = 8 + struct.calcsize(fmt)
    if pad_to:
        h += " " * ((-(pre + len(h) + 1)) % pad_to)
    h += "\n"
    enc = h.encode("latin1" if version < (3, 0) else "utf8")
    with open(name, "wb") as f:
        f.write(b"\x93NUMPY" + bytes(version) + struct.pack(fmt, len(enc)) + enc)
        f.write(np.asarray(a).tobytes(order="A"))
    got = np.load(name, max_header_size=2**20)
    assert got.dtype == a.dtype and got.shape == a.shape and np.array_equal(got, a), name
    files[name] = {"arrays": {"0": describe(got, "%d.%d" % version, pre + len(enc))}}


def npz(name, arrays, compressed=False):
    (np.savez_compressed if compressed else np.savez)(name, **arrays)
    entry = {"arrays": {}}
    z = zipfile.ZipFile(name)
    for info in z.infolist():
        key = info.filename[:-4]
        with z.open(info) as m:
            major, minor = np.lib.format.read_magic(m)
            np.lib.format._read_array_header(m, (major, minor))
            hlen = m.tell()
        off = -1
        if info.compress_type == zipfile.ZIP_STORED:
            with open(name, "rb") as f:
                f.seek(info.header_offset + 26)
                n, e = struct.unpack("<HH", f.read(4))
            off = info.header_offset + 30 + n + e + hlen
        got = np.load(name)[key]
        entry["arrays"][key] = describe(got, "%d.%d" % (major, minor), off)
    files[name] = entry


rng = np.random.default_rng(7)
x23 = np.arange(6, dtype="<f8").reshape(2, 3) / 4
save("f8-c.npy", x23)
save("f8-f.npy", np.asfortranarray(x23))
save("f8-3d-f.npy", np.asfortranarray(np.arange(24, dtype="<f8").reshape(2, 3, 4) - 7.5))
save("f8-0d.npy", np.array(3.5))
save("f8-empty.npy", np.zeros((0, 3)))
save("b1.npy", np.array([True, False, True]))
for t in ["i1", "u1"]:
    save(t + ".npy", np.array([-3, 0, 7, 100], dtype=t) if t[0] == "i" else np.array([0, 7, 200, 255], dtype=t))
for t in ["i2", "i4", "i8", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16"]:
    for bo in "<>":
        dt = np.dtype(bo + t)
        if dt.kind == "c":
            a = (np.arange(5) - 2.5 + 1j * np.arange(5) / 8).astype(dt)
        elif dt.kind == "f":
            a = np.array([-1.5, 0.0, 2.25, np.finfo(dt).max, np.inf], dtype=dt)
        elif dt.kind == "u":
            a = np.array([0, 1, 2, np.iinfo(dt).max], dtype=dt)
        else:
            a = np.array([np.iinfo(dt).min, -1, 0, np.iinfo(dt).max], dtype=dt)
        save("%s%s.npy" % ({"<": "le-", ">": "be-"}[bo], t), a)
save("M8s.npy", np.array(["2024-01-02T03:04:05", "1969-12-31T23:59:59", "NaT"], dtype="datetime64[s]"))
save("m8ms-be.npy", np.array([1500, -2, 0], dtype=">m8[ms]"))
save("S5.npy", np.array([b"ab", b"hello", b"", b"a\x00b"], dtype="S5"))
save("U3.npy", np.array(["ab", "€uro"[:3], "", "z"], dtype="<U3"))
save("U3-be.npy", np.array(["xy", "ñ"], dtype=">U3"))
save("V4.npy", np.array([b"\x01\x02\x03\x04", b"\xff\x00\x00\x10"], dtype="V4"))
save("S2-2d.npy", np.array([[b"a", b"bc"], [b"de", b"f"]], dtype="S2"))
rec = np.dtype([("a", "<i4"), ("b", ">f8", (2,)), ("c", "S3"), ("d", "<U2"), ("e", "?"), ("t", "<M8[D]")])
r = np.zeros(3, dtype=rec)
r["a"] = [1, -2, 3]
r["b"] = [[0.5, 1.5], [2.5, 3.5], [-1, -2]]
r["c"] = [b"x", b"yz", b"abc"]
r["d"] = ["p", "qr", ""]
r["e"] = [True, False, True]
r["t"] = np.array(["2020-02-29", "1970-01-01", "2000-01-01"], dtype="M8[D]")
save("struct.npy", r)
aligned = np.zeros(4, dtype=np.dtype([("x", "<i2"), ("y", "<f8"), ("z", "u1")], align=True))
aligned["x"] = [1, 2, 3, 4]
aligned["y"] = [0.25, -0.5, 1e300, 0]
aligned["z"] = [9, 8, 7, 255]
save("struct-aligned.npy", aligned)
masked = np.zeros(3, dtype=[("v", "<f8"), ("v.mask", "?"), ("n", "<i8")])
masked["v"] = [1.5, 0, 3]
masked["v.mask"] = [False, True, False]
masked["n"] = [10, 20, 30]
save("struct-mask.npy", masked)
s2 = np.zeros((2, 2), dtype=[("a", "<i2"), ("b", "<f4")], order="F")
s2["a"] = [[1, 2], [3, 4]]
s2["b"] = [[0.5, 1.5], [2.5, 3.5]]
save("struct-2d-f.npy", s2)
save("v2.npy", np.arange(5, dtype="<i4"), version=(2, 0))
save("v3.npy", np.arange(5, dtype=">u2"), version=(3, 0))
uni = np.zeros(2, dtype=[("名前", "<i4"), ("ß", "<f4")])
uni["名前"] = [7, 8]
uni["ß"] = [0.5, 0.25]
save("v3-unicode.npy", uni)
wide = np.zeros(2, dtype=[("f%04d" % i, "<u1") for i in range(5000)])
wide["f0000"] = [1, 2]
wide["f4999"] = [3, 4]
save("v2-wide.npy", wide)

# Headers NumPy reads but does not write.
a = np.arange(4, dtype="<f8")
raw("old-align16.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", a, pad_to=16)
raw("misaligned-v2.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", a, version=(2, 0))
raw("py2-long.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (4L,), }", a, pad_to=64)
raw("py2-long-2d.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (2L, 2L)}", a.reshape(2, 2), pad_to=64)
raw("spelling.npy", '{"shape": (4,), "fortran_order": False, "descr": "float64"}', a, pad_to=64)
raw("spacing.npy", "{ 'descr' :'<f8' ,\t'fortran_order':False,'shape':( 4 , ) ,}", a, pad_to=64)
raw("no-trailing-comma.npy", "{'descr': '<i8', 'fortran_order': True, 'shape': (2, 2)}", np.asfortranarray(np.arange(4).reshape(2, 2)), pad_to=64)
raw("name-bool.npy", "{'descr': 'bool', 'fortran_order': False, 'shape': (2,)}", np.array([True, False]), pad_to=64)
raw("no-growth-room.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", a, pad_to=16)

# Archives.
npz("savez.npz", {"x": np.arange(3.0), "y": np.array([1, 2], dtype=">i4"), "s": r, "e": np.zeros((0,), dtype="<c8")})
npz("savez-compressed.npz", {"x": np.arange(3.0), "big": np.arange(1000, dtype="<i8") % 7, "s": r}, compressed=True)
npz("arr-names.npz", {"arr_0": np.arange(2, dtype="u1"), "arr_1": np.asfortranarray(x23)})

with open("golden.json", "w") as f:
    json.dump(files, f, indent=1, sort_keys=True, ensure_ascii=False)
print(len(files), "files")
