"""numcodecs' Blosc as the oracle of package blosc's tests.

    oracle.py cases DIR    write inputs and numcodecs' frames of every case
                           (DIR/inputs.bin, DIR/frames.bin, DIR/index.json)
    oracle.py check DIR    decode the frames mmapkit wrote for the same cases
                           (DIR/go-frames.bin, DIR/go-index.json) with
                           numcodecs and print the cases that differ, as JSON
    oracle.py golden DIR   write the small golden set committed in
                           testdata/numcodecs (NAME.blosc, NAME.raw)

Inputs are deterministic: data(typesize, size) is the same bytes in every
run, so that the golden set can be remade and compared.
"""
import json
import os
import sys

import numpy as np
import numcodecs
from numcodecs import Blosc

CNAMES = [c for c in ("blosclz", "lz4", "lz4hc", "zlib", "zstd", "snappy")
          if c in numcodecs.blosc.list_compressors()]
LEVELS = (0, 1, 5, 9)
SHUFFLES = (Blosc.NOSHUFFLE, Blosc.SHUFFLE, Blosc.BITSHUFFLE)
TYPESIZES = (1, 2, 4, 8, 3, 12)
SIZES = (0, 1, 7, 1000, 100003, 200003)
# Forced block sizes: a small one (many blocks) and one that is not a
# multiple of 3, 8 or 12; on a subset of the cases.
BLOCKSIZES = (4096, 1000)


def data(typesize, size):
    """size bytes of elements of typesize bytes: a smooth series (what
    climate and simulation arrays look like), a stretch of noise and a run
    of zeros, so that every codec and shuffle has something to find."""
    n = -(-size // typesize) + 1
    t = np.arange(n, dtype=np.float64)
    smooth = (np.sin(t / 300.0) * 5000 + t / 7).astype(np.int64)
    words = smooth.astype("<u8").view(np.uint8).reshape(n, 8)
    if typesize <= 8:
        elems = words[:, :typesize]
    else:
        elems = np.concatenate([words, words[:, : typesize - 8][::-1]], axis=1)
    b = bytearray(elems.tobytes()[:size])
    rng = np.random.default_rng(typesize * 1000003 + size)
    q = size // 4
    b[q : q + size // 10] = rng.integers(0, 256, size // 10, dtype=np.uint8).tobytes()
    b[2 * q : 2 * q + size // 10] = bytes(size // 10)
    return bytes(b)


def array(buf, typesize):
    """buf as an array whose items are typesize bytes (numcodecs takes the
    element size from the buffer)."""
    if len(buf) % typesize:
        # numcodecs needs whole items: the element size is then 1.
        return np.frombuffer(buf, dtype=np.uint8), 1
    return np.frombuffer(buf, dtype="V%d" % typesize if typesize > 1 else np.uint8), typesize


def cases():
    for cname in CNAMES:
        for level in LEVELS:
            for shuffle in SHUFFLES:
                for typesize in TYPESIZES:
                    for size in SIZES:
                        yield cname, level, shuffle, typesize, size, 0
                    if level == 5:
                        for bs in BLOCKSIZES:
                            yield cname, level, shuffle, typesize, 100003, bs


def write_cases(d):
    inputs, offsets = bytearray(), {}
    index = []
    with open(os.path.join(d, "frames.bin"), "wb") as frames:
        at = 0
        for cname, level, shuffle, typesize, size, bs in cases():
            key = "%d-%d" % (typesize, size)
            if key not in offsets:
                offsets[key] = len(inputs)
                inputs += data(typesize, size)
            a, ts = array(data(typesize, size), typesize)
            enc = bytes(Blosc(cname, level, shuffle, bs).encode(a))
            frames.write(enc)
            index.append(dict(cname=cname, level=level, shuffle=shuffle, typesize=ts,
                              size=size, blocksize=bs, input=offsets[key],
                              offset=at, length=len(enc)))
            at += len(enc)
    with open(os.path.join(d, "inputs.bin"), "wb") as f:
        f.write(inputs)
    with open(os.path.join(d, "index.json"), "w") as f:
        json.dump(index, f)


def check(d):
    with open(os.path.join(d, "go-index.json")) as f:
        index = json.load(f)
    with open(os.path.join(d, "go-frames.bin"), "rb") as f:
        frames = f.read()
    with open(os.path.join(d, "inputs.bin"), "rb") as f:
        inputs = f.read()
    bad = []
    for c in index:
        enc = frames[c["offset"] : c["offset"] + c["length"]]
        want = inputs[c["input"] : c["input"] + c["size"]]
        try:
            got = bytes(numcodecs.blosc.decompress(enc))
        except Exception as e:  # noqa: BLE001 - reported to the Go test
            bad.append(dict(case=c, error=str(e)))
            continue
        if got != want:
            bad.append(dict(case=c, error="decoded %d bytes that differ from the input" % len(got)))
    json.dump(dict(checked=len(index), bad=bad), sys.stdout)


GOLDEN = [
    # name, cname, level, shuffle, typesize, size, blocksize
    ("lz4-shuffle-f8", "lz4", 5, Blosc.SHUFFLE, 8, 40000, 8192),
    ("lz4hc-bitshuffle-i4", "lz4hc", 9, Blosc.BITSHUFFLE, 4, 20000, 0),
    ("blosclz-shuffle-i4", "blosclz", 5, Blosc.SHUFFLE, 4, 40000, 0),
    ("blosclz-noshuffle-b1", "blosclz", 9, Blosc.NOSHUFFLE, 1, 20001, 4096),
    ("blosclz-bitshuffle-v3", "blosclz", 1, Blosc.BITSHUFFLE, 3, 30000, 0),
    ("snappy-shuffle-v12", "snappy", 5, Blosc.SHUFFLE, 12, 24000, 0),
    ("zlib-shuffle-i2", "zlib", 5, Blosc.SHUFFLE, 2, 20000, 0),
    ("zstd-bitshuffle-f8", "zstd", 5, Blosc.BITSHUFFLE, 8, 40000, 0),
    ("lz4-stored-i4", "lz4", 0, Blosc.SHUFFLE, 4, 1000, 0),
    ("lz4-small-f8", "lz4", 5, Blosc.SHUFFLE, 8, 72, 0),
    ("zstd-empty", "zstd", 5, Blosc.SHUFFLE, 8, 0, 0),
]


def golden(d):
    for name, cname, level, shuffle, typesize, size, bs in GOLDEN:
        raw = data(typesize, size)
        a, _ = array(raw, typesize)
        with open(os.path.join(d, name + ".blosc"), "wb") as f:
            f.write(bytes(Blosc(cname, level, shuffle, bs).encode(a)))
        with open(os.path.join(d, name + ".raw"), "wb") as f:
            f.write(raw)


if __name__ == "__main__":
    {"cases": write_cases, "check": check, "golden": golden}[sys.argv[1]](sys.argv[2])
