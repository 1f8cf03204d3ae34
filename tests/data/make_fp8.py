#!/usr/bin/env python3
"""Known answers for fp8 scaling (tests/oracle/fp8_test.cc), computed with exact rational arithmetic
(fractions), independently of the C++ reference: each scale amax/M rounded to nearest-even in f32
(or the least power of two at or above it), each q = x/s rounded to nearest-even in the fp8
format, saturating. Writes tests/data/fp8.json."""
import json
import math
import os
from fractions import Fraction as F

FORMATS = {  # explicit significand bits, bias, max finite
    "e4m3": (3, 7, F(448)),
    "e5m2": (2, 15, F(57344)),
    "f32": (23, 127, F(2) ** 127 * (2 - F(1, 2 ** 23))),
}


def round_to(fmt, x):
    """x rounded to nearest-even in fmt (saturating at its max finite value)."""
    man, bias, top = FORMATS[fmt]
    if x == 0:
        return F(0)
    sign = -1 if x < 0 else 1
    a = abs(x)
    e = math.floor(math.log2(a))  # may be off by one for huge/small fractions: fix below
    while F(2) ** e > a:
        e -= 1
    while F(2) ** (e + 1) <= a:
        e += 1
    e = max(e, 1 - bias)  # subnormal range: fixed quantum
    quantum = F(2) ** (e - man)
    q, r = divmod(a, quantum)
    if r > quantum / 2 or (r == quantum / 2 and q % 2 == 1):
        q += 1
    v = q * quantum
    return sign * min(v, top)


def bf16_values(n, seed):
    """n deterministic values exact in bf16 (8 significant bits), of order 1."""
    out, s = [], seed
    for _ in range(n):
        s = (s * 6364136223846793005 + 1442695040888963407) % 2 ** 64
        mant = 128 + (s >> 40) % 128           # 8 significant bits
        exp = (s >> 20) % 8 - 9                  # 2^-9 … 2^-2 times mant: about 0.25 … 64
        sign = -1 if (s >> 10) & 1 else 1
        out.append(sign * F(mant) * F(2) ** exp)
    return out


def quantize(x, rows, cols, tile_rows, tile_cols, fp8, form, floor):
    man, bias, m = FORMATS[fp8]
    across = -(-cols // tile_cols)
    down = -(-rows // tile_rows)
    amax = [F(0)] * (down * across)
    for r in range(rows):
        for c in range(cols):
            g = (r // tile_rows) * across + c // tile_cols
            amax[g] = max(amax[g], abs(x[r * cols + c]))
    scales = []
    for a in amax:
        ratio = max(a, floor) / m
        if form == "f32":
            scales.append(round_to("f32", ratio))
        else:
            e = 0
            while F(2) ** e < ratio:
                e += 1
            while F(2) ** (e - 1) >= ratio:
                e -= 1
            scales.append(F(2) ** e)
    q = []
    for r in range(rows):
        for c in range(cols):
            s = scales[(r // tile_rows) * across + c // tile_cols]
            v = max(-m, min(m, x[r * cols + c] / s))
            q.append(round_to(fp8, v))
    return q, scales


def every_e4m3_and_midpoint():
    """A row with 448 (so that s = 1 exactly) and every finite positive E4M3 value, every
    midpoint between neighbours, and the f32 neighbours of each midpoint, both signs."""
    vals = set()  # the finite E4M3 values, from their fields
    for e in range(0, 16):
        for mant in range(8):
            if e == 15 and mant == 7:
                continue  # NaN
            v = F(mant, 8) * F(2) ** (1 - 7) if e == 0 else (1 + F(mant, 8)) * F(2) ** (e - 7)
            vals.add(v)
    vals = sorted(vals)
    row = [F(448)]
    for a, b in zip(vals, vals[1:]):
        mid = (a + b) / 2
        # f32 neighbours of the midpoint: ±1 ulp of f32 at its binade
        e = math.floor(math.log2(mid)) if mid > 0 else -149
        ulp = F(2) ** max(e - 23, -149)
        row += [a, mid, mid - ulp, mid + ulp]
    row += [-v for v in row]
    return row


def case(params, storage, x, q, scales):
    return {"params": params, "storage": storage, "x": [float(v) for v in x],
            "q": [float(v) for v in q], "scales": [float(v) for v in scales]}


def main():
    cases = []
    x = bf16_values(2 * 10, 1)
    q, s = quantize(x, 2, 10, 1, 4, "e4m3", "f32", F(1e-10))
    cases.append(case({"rows": 2, "cols": 10, "scaling": "group", "group": 4}, "bf16", x, q, s))
    q, s = quantize(x, 2, 10, 1, 4, "e4m3", "ue8m0", F(1e-10))
    cases.append(case({"rows": 2, "cols": 10, "scaling": "group", "group": 4, "scale": "ue8m0"},
                      "bf16", x, q, s))
    x = bf16_values(3 * 7, 2)
    q, s = quantize(x, 3, 7, 1, 7, "e5m2", "f32", F(1e-10))
    cases.append(case({"rows": 3, "cols": 7, "scaling": "token", "fp8": "e5m2"}, "bf16", x, q, s))
    x = bf16_values(5 * 6, 3)
    q, s = quantize(x, 5, 6, 4, 4, "e4m3", "f32", F(1e-10))
    cases.append(case({"rows": 5, "cols": 6, "scaling": "block", "group": 4}, "bf16", x, q, s))
    # A zero group takes the floor: s = f32(1e-10/448), q = 0.
    x = [F(0)] * 4 + bf16_values(4, 4)
    q, s = quantize(x, 1, 8, 1, 4, "e4m3", "f32", F(1e-10))
    cases.append(case({"rows": 1, "cols": 8, "scaling": "group", "group": 4}, "f32", x, q, s))
    # Every E4M3 value, midpoint and f32 neighbour of a midpoint, at s = 1.
    x = every_e4m3_and_midpoint()
    q, s = quantize(x, 1, len(x), 1, len(x), "e4m3", "f32", F(0))
    assert s == [F(1)]
    cases.append(case({"rows": 1, "cols": len(x), "scaling": "token", "amax_floor": 0}, "f32",
                      x, q, s))
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fp8.json")
    with open(out, "w") as f:
        json.dump({"comment": "written by tests/data/make_fp8.py (exact rational arithmetic)",
                   "cases": cases}, f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()
