"""f32 arguments x whose exact SiLU, x / (1 + e^-x), or exact GELU, x/2·erfc(−x/√2), lies
within 2^-70 (relative) of a midpoint between two adjacent doubles: inputs on which a certified
evaluation must decide a rounding correctly or fall back. Computed with mpmath at 200 bits;
writes the C++ initializer list that tests/oracle/certified_test.cc includes. GELU's arguments
are taken on both sides of 0 (x > 0 reads erfc near 2, x < 0 erfc's tail: both sides of
reference/ball_erf.cc) and across erfcx's table (reference/erfcx_taylor.cc).

    python3 tests/data/certified_near_midpoints.py silu > tests/data/certified_silu_near_midpoints.inc
    python3 tests/data/certified_near_midpoints.py gelu > tests/data/certified_gelu_near_midpoints.inc
"""
import struct
import sys

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


def silu(x):
    return x / (1 + mpmath.exp(-x))


def gelu(x):
    return x / 2 * mpmath.erfc(-x / mpmath.sqrt(2))


def hits_from(f, start, step, want):
    """The first `want` f32 values from `start` (stepping the bit pattern by `step`) whose f(x)
    lies within 2^-70 of a double midpoint."""
    hits = []
    u = struct.unpack("<I", struct.pack("<f", start))[0]
    while len(hits) < want:
        u += step
        x = mpmath.mpf(f32_from_bits(u))
        if distance_to_double_midpoint(f(x)) < mpmath.mpf(2) ** -70:
            hits.append(f32_from_bits(u))
    return hits


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "silu"
    if which == "silu":
        hits = hits_from(silu, 0.75, 1, WANT)
    elif which == "gelu":
        # Consecutive f32 values from four starts: 0.75 and 3.2 up (2 − erfc(t), t near 0.53 and
        # 2.3), −0.75 and −5.1 down (erfc(t) itself, near 0.45 and in its tail near 4·10^-7).
        hits = []
        for start in (0.75, 3.2, -0.75, -5.1):
            hits += hits_from(gelu, start, 1, WANT // 2)
    else:
        raise SystemExit("usage: certified_near_midpoints.py silu|gelu")
    for x in hits:
        print(f"    {x.hex()},")


if __name__ == "__main__":
    main()
