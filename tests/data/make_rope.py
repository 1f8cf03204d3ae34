#!/usr/bin/env python3
"""Known answers for F10 RoPE (reference/rope.h), computed with mpmath at 50 digits.

Writes rope.json beside this script. Inputs are exact doubles (float.hex()); expected values are
50-significant-digit decimals. The rotation is evaluated in its complex form,
(x_a + i x_b) · e^{i p θ_k} with θ_k = base^(−2k/r), rather than the rotation-matrix form the C++
code uses: an independent route to the same numbers.

Layouts: "interleaved" pairs (2k, 2k+1); "half_split" pairs (k, k + r/2); dimensions r … d−1
pass through. The hard point: d = r = 128, base 500000, position 1 000 000 (the angle p·θ_0 is
10^6 radians: the argument reduction must be carried at 50 digits, which mpmath does).
"""
import json
import os
import random

from mpmath import mp, mpf, mpc, expj, nstr

mp.dps = 50


def rope_mp(x, position, r, base, layout):
    y = [mpf(v) for v in x]
    half = r // 2
    for k in range(half):
        theta = mpf(base) ** (-mpf(2 * k) / r)
        a, b = (2 * k, 2 * k + 1) if layout == "interleaved" else (k, k + half)
        z = mpc(x[a], x[b]) * expj(mpf(position) * theta)
        y[a], y[b] = z.real, z.imag
    return y


def main():
    rng = random.Random(20240610)
    cases = []
    specs = [
        # (name, d, r, base, positions)
        ("small", 8, 8, 10000, [0, 1, 2, 7, 100]),
        ("partial", 12, 8, 10000, [3, 50]),
        ("base5e5", 16, 16, 500000, [5, 8192]),
        ("partial_large", 128, 64, 500000, [1000000]),
        ("hard", 128, 128, 500000, [1000000, 131071]),
    ]
    for name, d, r, base, positions in specs:
        for layout in ("interleaved", "half_split"):
            xs, ys = [], []
            for p in positions:
                x = [rng.uniform(-1.0, 1.0) for _ in range(d)]
                xs.append([v.hex() for v in x])
                ys.append([nstr(v, 50) for v in rope_mp(x, p, r, base, layout)])
            cases.append({
                "name": name, "layout": layout, "d": d, "rotary_dims": r,
                "base": float(base).hex(), "positions": [float(p).hex() for p in positions],
                "x": xs, "y": ys,
            })
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rope.json")
    with open(out, "w") as f:
        json.dump({"generator": "make_rope.py", "dps": 50, "cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
