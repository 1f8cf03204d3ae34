"""The project's formats against ml_dtypes (Google's bfloat16/float8 NumPy types) and NumPy's
float16: every bit pattern decodes to the same value, and float32 inputs (every midpoint
between neighbours, their neighbours, and a deterministic spread over the whole range) round
to the same pattern. Usage: ml_dtypes_test.py PATH/TO/format_probe"""
import subprocess
import sys

import ml_dtypes
import numpy as np

FORMATS = {  # project name -> (NumPy type, storage integer type)
    "bf16": (ml_dtypes.bfloat16, np.uint16),
    "f16": (np.float16, np.uint16),
    "e4m3": (ml_dtypes.float8_e4m3fn, np.uint8),
    "e5m2": (ml_dtypes.float8_e5m2, np.uint8),
}


def probe(requests):
    text = "".join(f"{op} {fmt} {value:x}\n" for op, fmt, value in requests)
    out = subprocess.run([sys.argv[1]], input=text, capture_output=True, text=True, check=True)
    return [int(line, 16) for line in out.stdout.split()]


def f64_bits(values):
    return np.asarray(values, dtype=np.float64).view(np.uint64).tolist()


def same(a, b):
    return (np.isnan(a) & np.isnan(b)) | (a.view(np.uint64) == b.view(np.uint64))


def check_format(name, dtype, storage):
    failures = 0
    patterns = np.arange(np.iinfo(storage).max + 1, dtype=np.uint64).astype(storage)
    theirs = patterns.view(dtype).astype(np.float64)
    ours = np.array(probe([("d", name, int(p)) for p in patterns]), dtype=np.uint64).view(np.float64)
    bad = ~same(ours, theirs)
    failures += int(bad.sum())
    for p in patterns[bad][:5]:
        print(f"{name}: pattern {int(p):#x} decodes to {ours[int(p)]!r}, ml_dtypes {theirs[int(p)]!r}")

    # float32 inputs: midpoints of neighbours (exact in float32 for these formats), values a
    # quarter-ulp either side, and a fixed pseudo-random spread of all float32 bit patterns.
    finite = theirs[np.isfinite(theirs)]
    vals = np.unique(np.abs(finite))
    mids = (vals[:-1] + vals[1:]) / 2
    gaps = (vals[1:] - vals[:-1]) / 4
    rng = np.random.Generator(np.random.Philox(20261122))
    spread = rng.integers(0, 2**32, size=200000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    inputs = np.concatenate([mids, mids + gaps, mids - gaps, -mids, spread.astype(np.float64)])
    inputs = inputs.astype(np.float32)
    inputs = inputs[~np.isnan(inputs)].astype(np.float64)
    theirs_bits = inputs.astype(np.float32).astype(dtype).view(storage).astype(np.uint64)
    ours_bits = np.array(probe([("e", name, b) for b in f64_bits(inputs)]), dtype=np.uint64)
    # ml_dtypes maps overflow to inf, or to NaN for float8_e4m3fn (no inf), as we do.
    bad = ours_bits != theirs_bits
    theirs_nan = np.isnan(theirs_bits.astype(storage).view(dtype).astype(np.float64))
    ours_nan = np.isnan(ours_bits.astype(storage).view(dtype).astype(np.float64))
    bad &= ~(theirs_nan & ours_nan)  # NaN payloads may differ
    failures += int(bad.sum())
    for x, o, t in list(zip(inputs[bad], ours_bits[bad], theirs_bits[bad]))[:5]:
        print(f"{name}: {x!r} rounds to {int(o):#x}, ml_dtypes {int(t):#x}")
    return failures, len(patterns) + len(inputs)


def main():
    np.seterr(invalid="ignore", over="ignore")  # NaN and overflow casts are the point here
    total_fail = total = 0
    for name, (dtype, storage) in FORMATS.items():
        failed, checked = check_format(name, dtype, storage)
        print(f"{name}: {checked} values checked, {failed} differ")
        total_fail += failed
        total += checked
    print(f"{total - total_fail} passed, {total_fail} failed")
    return 1 if total_fail else 0


if __name__ == "__main__":
    sys.exit(main())
