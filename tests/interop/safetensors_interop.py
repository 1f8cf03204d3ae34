"""The C++ safetensors reader and writer against Python's safetensors package (the format's
reference implementation, in Rust) with NumPy and ml_dtypes for bfloat16 and float8:
  1. files the C++ writer makes load in Python with the same names, dtypes, shapes, bytes and
     metadata (safetensors.numpy.load_file where NumPy has the dtype, else the raw views of
     safetensors.deserialize read through ml_dtypes), and two writes are byte-identical;
  2. files Python's safetensors writes (safetensors.numpy.save_file) read in C++ identically,
     each floating element decoding to the value ml_dtypes/NumPy give it;
  3. malformed files that the reference implementation rejects, C++ rejects too (exit 2).
Usage: safetensors_interop.py PATH/TO/safetensors_probe"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import ml_dtypes
import numpy as np
import safetensors
import safetensors.numpy

PROBE = sys.argv[1]

# project dtype -> (safetensors dtype string, NumPy dtype)
DTYPES = {
    "f64": ("F64", np.dtype(np.float64)),
    "f32": ("F32", np.dtype(np.float32)),
    "tf32": ("F32", np.dtype(np.float32)),  # no TF32 in safetensors: a binary32 word
    "bf16": ("BF16", np.dtype(ml_dtypes.bfloat16)),
    "f16": ("F16", np.dtype(np.float16)),
    "e4m3": ("F8_E4M3", np.dtype(ml_dtypes.float8_e4m3fn)),
    "e5m2": ("F8_E5M2", np.dtype(ml_dtypes.float8_e5m2)),
    "i64": ("I64", np.dtype(np.int64)),
    "i32": ("I32", np.dtype(np.int32)),
    "u8": ("U8", np.dtype(np.uint8)),
}
NUMPY_NATIVE = {"f64", "f32", "tf32", "f16", "i64", "i32", "u8"}
SHAPES = [(), (0,), (7,), (2, 3), (3, 0, 2), (4, 5)]
METADATA = {"case": '{"op":"rmsnorm","seed":7}', "unicode": "π ≈ 3.14159 — ok", "empty": ""}

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def arrays(kinds, seed):
    """Random bit patterns of every dtype and shape (NaNs, infinities, subnormals included)."""
    rng = np.random.Generator(np.random.Philox(seed))
    out = {}
    for kind in kinds:
        _, dtype = DTYPES[kind]
        for k, shape in enumerate(SHAPES):
            n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
            raw = rng.integers(0, 256, size=n, dtype=np.uint8)
            if kind == "tf32":  # a tf32 word keeps its 13 low bits clear
                raw = (raw.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.uint8)
            out[f"{kind}.{k}"] = (kind, raw.view(dtype).reshape(shape))
    return out


def same_values(a, b):
    """Element values equal as float64 (NaN matches NaN, -0 differs from +0)."""
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    both_nan = np.isnan(a) & np.isnan(b)
    return bool(np.all(both_nan | (a.view(np.uint64) == b.view(np.uint64))))


def probe(*args, stdin=None):
    return subprocess.run([PROBE, *args], input=stdin, capture_output=True, text=True)


def cpp_write(path, tensors, metadata):
    spec = {
        "tensors": {
            name: {"dtype": kind, "shape": list(a.shape), "hex": a.tobytes().hex()}
            for name, (kind, a) in tensors.items()
        },
        "metadata": metadata,
    }
    r = probe("write", path, stdin=json.dumps(spec))
    if r.returncode != 0:
        sys.exit(f"probe write failed: {r.stderr}")


def cpp_to_python(tmp):
    tensors = arrays(DTYPES, 1)
    path = os.path.join(tmp, "cpp.safetensors")
    cpp_write(path, tensors, METADATA)
    again = os.path.join(tmp, "cpp_again.safetensors")
    cpp_write(again, tensors, METADATA)
    check(open(path, "rb").read() == open(again, "rb").read(), "two C++ writes are identical")

    with safetensors.safe_open(path, framework="np") as f:
        check(f.metadata() == METADATA, f"metadata read by Python: {f.metadata()}")
        check(sorted(f.keys()) == sorted(tensors), "tensor names read by Python")
    # Every dtype through the reference implementation's raw views.
    views = dict(safetensors.deserialize(open(path, "rb").read()))
    for name, (kind, a) in tensors.items():
        v = views[name]
        st_name, dtype = DTYPES[kind]
        check(v["dtype"] == st_name, f"{name}: dtype {v['dtype']}, expected {st_name}")
        check(tuple(v["shape"]) == a.shape, f"{name}: shape {v['shape']}")
        check(bytes(v["data"]) == a.tobytes(), f"{name}: bytes differ")
        got = np.frombuffer(bytes(v["data"]), dtype=dtype).reshape(v["shape"])
        if dtype.kind in "fV":
            check(same_values(got, a), f"{name}: values differ")
    # NumPy's own loader for the dtypes NumPy has.
    native = {n: t for n, t in tensors.items() if t[0] in NUMPY_NATIVE}
    path = os.path.join(tmp, "cpp_native.safetensors")
    cpp_write(path, native, {})
    loaded = safetensors.numpy.load_file(path)
    check(sorted(loaded) == sorted(native), "load_file names")
    for name, (kind, a) in native.items():
        b = loaded[name]
        check(b.dtype == a.dtype and b.shape == a.shape, f"{name}: load_file {b.dtype} {b.shape}")
        check(b.tobytes() == a.tobytes(), f"{name}: load_file bytes differ")
    print(f"C++ -> Python: {len(tensors)} + {len(native)} tensors checked")


def python_to_cpp(tmp):
    tensors = arrays([k for k in DTYPES if k != "tf32"], 2)
    path = os.path.join(tmp, "py.safetensors")
    safetensors.numpy.save_file({n: a for n, (_, a) in tensors.items()}, path, metadata=METADATA)
    r = probe("dump", path)
    if r.returncode != 0:
        sys.exit(f"probe dump failed: {r.stderr}")
    got = json.loads(r.stdout)
    check(got["metadata"] == METADATA, f"metadata read by C++: {got['metadata']}")
    check(sorted(got["tensors"]) == sorted(tensors), "tensor names read by C++")
    for name, (kind, a) in tensors.items():
        t = got["tensors"][name]
        check(t["dtype"] == kind, f"{name}: C++ dtype {t['dtype']}, expected {kind}")
        check(tuple(t["shape"]) == a.shape, f"{name}: C++ shape {t['shape']}")
        check(bytes.fromhex(t["hex"]) == a.tobytes(), f"{name}: C++ bytes differ")
        if a.dtype.kind in "fV":
            ours = np.array([int(h, 16) for h in t["values"]], dtype=np.uint64).view(np.float64)
            check(same_values(ours, a.astype(np.float64)), f"{name}: C++ values differ")
    print(f"Python -> C++: {len(tensors)} tensors checked")


def malformed():
    """(description, file bytes) pairs that break one rule each."""

    def f(header, data=b"", claimed=None):
        h = header.encode() if isinstance(header, str) else header
        return struct.pack("<Q", len(h) if claimed is None else claimed) + h + data

    e = lambda dtype, shape, offs: json.dumps(
        {"dtype": dtype, "shape": shape, "data_offsets": offs})
    return [
        ("truncated length", b"\x02\x00\x00"),
        ("header past the end", f("{}", claimed=64)),
        ("header over 100 MB", f("{}", claimed=100_000_001)),
        ("invalid UTF-8", f(b'{"\xc3\x28":' + e("U8", [1], [0, 1]).encode() + b"}", b"\0")),
        ("not JSON", f('{"a":')),
        ("unknown dtype", f('{"a":' + e("F33", [1], [0, 4]) + "}", b"\0" * 4)),
        ("size mismatch", f('{"a":' + e("F32", [2, 3], [0, 20]) + "}", b"\0" * 20)),
        ("shape overflow", f('{"a":' + e("U8", [2**32, 2**32], [0, 1]) + "}", b"\0")),
        ("overlap", f('{"a":' + e("U8", [4], [0, 4]) + ',"b":' + e("U8", [4], [2, 6]) + "}",
                      b"\0" * 6)),
        ("gap", f('{"a":' + e("U8", [2], [0, 2]) + ',"b":' + e("U8", [2], [3, 5]) + "}",
                  b"\0" * 5)),
        ("trailing bytes", f('{"a":' + e("U8", [2], [0, 2]) + "}", b"\0" * 5)),
        ("data truncated", f('{"a":' + e("U8", [4], [0, 4]) + "}", b"\0" * 3)),
        ("metadata not strings", f('{"__metadata__":{"k":1}}')),
    ]


def both_reject(tmp):
    for what, data in malformed():
        path = os.path.join(tmp, "bad.safetensors")
        open(path, "wb").write(data)
        try:
            safetensors.deserialize(data)
            python_rejects = False
        except Exception:
            python_rejects = True
        r = probe("dump", path)
        check(python_rejects, f"{what}: the reference implementation accepts it")
        check(r.returncode == 2 and "bad.safetensors" in r.stderr,
              f"{what}: C++ exit {r.returncode}, stderr {r.stderr!r}")
    print(f"malformed: {len(malformed())} files rejected by both")


def main():
    print(f"safetensors {safetensors.__version__}, ml_dtypes {ml_dtypes.__version__}, "
          f"numpy {np.__version__}")
    np.seterr(invalid="ignore")  # NaN patterns compared as NaN
    with tempfile.TemporaryDirectory() as tmp:
        cpp_to_python(tmp)
        python_to_cpp(tmp)
        both_reject(tmp)
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
