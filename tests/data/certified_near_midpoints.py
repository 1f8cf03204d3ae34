"""f32 arguments x whose exact SiLU, x / (1 + e^-x), lies within 2^-70 (relative) of a midpoint
between two adjacent doubles: inputs on which a certified evaluation must decide a rounding
correctly or fall back. Computed with mpmath at 200 bits; writes the C++ initializer list that
tests/oracle/certified_test.cc includes.

    python3 tests/data/certified_near_midpoints.py > tests/data/certified_silu_near_midpoints.inc
"""
import struct

import mpmath

mpmath.mp.prec = 200
WANT = 6


def f32_from_bits(u):
    return struct.unpack("<f", struct.pack("<I", u))[0]


def distance_to_double_midpoint(y):
    """|y − nearest f64 midpoint| / |y|."""
    _, e = mpmath.frexp(y)  # |y| = m·2^e, m in [0.5, 1)
    scaled = abs(y) * mpmath.mpf(2) ** (53 - e)  # units of ulp: 53-bit integer part
    frac = scaled - mpmath.floor(scaled)
    return abs(frac - mpmath.mpf("0.5")) / scaled


def main():
    hits = []
    u = struct.unpack("<I", struct.pack("<f", 0.75))[0]
    while len(hits) < WANT:
        u += 1  # consecutive f32 values from 0.75 up
        x = mpmath.mpf(f32_from_bits(u))
        y = x / (1 + mpmath.exp(-x))
        if distance_to_double_midpoint(y) < mpmath.mpf(2) ** -70:
            hits.append(f32_from_bits(u))
    for x in hits:
        print(f"    {x.hex()},")


if __name__ == "__main__":
    main()
