#!/usr/bin/env python3
"""Independent re-implementation of oracle/core/inputs.h and oracle/core/specials.h for cross-checking.

Recomputes the tensors pinned in tests/oracle/inputs_test.cc (InputsPinned.*) from the documented
derivation alone -- Philox4x32-10, FNV-1a 64, the uniform / Box-Muller / integer formulas and
round-to-nearest-even into each storage format -- using Python integers, exact fractions and
mpmath at 320 bits (about twice the 167 bits of the C++ `mp`), and prints the SHA-256 of each
tensor's little-endian bytes. With --check it compares them with the literals in the C++ test.

The C++ code rounds its mp intermediates at 167 bits; both results round to the same format
value unless the exact value lies within ~2^-100 (relative) of a rounding boundary, which for
these few thousand elements does not happen by chance.

Needs mpmath (tools/requirements.txt; installed by tools/setup). Usage: inputs_check.py [--check tests/oracle/inputs_test.cc]
"""

import argparse
import hashlib
import re
import sys
from fractions import Fraction

import mpmath

M32 = 0xFFFFFFFF
M64 = (1 << 64) - 1


def philox4x32_10(ctr, key):
    ctr, key = list(ctr), list(key)
    for r in range(10):
        if r > 0:
            key = [(key[0] + 0x9E3779B9) & M32, (key[1] + 0xBB67AE85) & M32]
        p0 = 0xD2511F53 * ctr[0]
        p1 = 0xCD9E8D57 * ctr[2]
        ctr = [(p1 >> 32) ^ ctr[1] ^ key[0], p1 & M32, (p0 >> 32) ^ ctr[3] ^ key[1], p0 & M32]
    return ctr


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for c in data:
        h = ((h ^ c) * 0x100000001B3) & M64
    return h


def draw(seed, name, index):
    h = fnv1a64(name.encode())
    ctr = [index & M32, index >> 32, h & M32, h >> 32]
    return philox4x32_10(ctr, [seed & M32, seed >> 32])


# name: (exp_bits, frac_bits, bias, has_inf, container_bytes, shift)
FORMATS = {
    "f64": (11, 52, 1023, True, 8, 0),
    "f32": (8, 23, 127, True, 4, 0),
    "tf32": (8, 10, 127, True, 4, 13),
    "bf16": (8, 7, 127, True, 2, 0),
    "f16": (5, 10, 15, True, 2, 0),
    "e4m3": (4, 3, 7, False, 1, 0),
    "e5m2": (5, 2, 15, True, 1, 0),
}


def floor_log2(x: Fraction) -> int:
    """Largest e with 2^e <= x, for x > 0."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    if Fraction(2) ** (e + 1) <= x:
        e += 1
    return e


def round_bits(fmt, x: Fraction, negative_zero=False) -> int:
    """Bits of x rounded to nearest-even in fmt (finite results only)."""
    eb, fb, bias, has_inf, _, shift = FORMATS[fmt]
    sign_bit = 1 << (eb + fb)
    neg = x < 0 or (x == 0 and negative_zero)
    a = -x if x < 0 else x
    if a == 0:
        return (sign_bit if neg else 0) << shift
    emin = 1 - bias
    e = max(floor_log2(a), emin)
    q = Fraction(2) ** (e - fb)  # quantum in this binade
    n = a / q
    m = n.numerator // n.denominator
    rem = n - m
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and m % 2 == 1):
        m += 1
    if m == 1 << (fb + 1):
        m >>= 1
        e += 1
    top = (1 << eb) - 1
    emax = (top - 1 if has_inf else top) - bias
    max_m = (1 << (fb + 1)) - (1 if has_inf else 2)
    assert e < emax or (e == emax and m <= max_m), "overflow not expected here"
    if m < (1 << fb):
        p = m  # subnormal
    else:
        p = ((e + bias) << fb) | (m - (1 << fb))
    return ((sign_bit if neg else 0) | p) << shift


def value_of(fmt, bits) -> Fraction:
    eb, fb, bias, _, _, shift = FORMATS[fmt]
    p = bits >> shift
    neg = (p >> (eb + fb)) & 1
    e = (p >> fb) & ((1 << eb) - 1)
    f = p & ((1 << fb) - 1)
    v = Fraction(f) * Fraction(2) ** (1 - bias - fb) if e == 0 else \
        Fraction(f | (1 << fb)) * Fraction(2) ** (e - bias - fb)
    return -v if neg else v


def to_bytes(fmt_or_int, words):
    size = FORMATS[fmt_or_int][4] if fmt_or_int in FORMATS else {"i32": 4, "i64": 8}[fmt_or_int]
    return b"".join((w & ((1 << (8 * size)) - 1)).to_bytes(size, "little") for w in words)


def uniform(seed, name, fmt, n, a, b):
    a, b = Fraction(a), Fraction(b)
    lowest = round_bits(fmt, a)
    assert value_of(fmt, lowest) >= a  # true for the pinned bounds; no stepping needed
    highest = round_bits(fmt, b)
    assert value_of(fmt, highest) >= b and b > 0
    highest -= 1 << FORMATS[fmt][5]  # next value down, for a positive b
    out = []
    for i in range(n):
        r = draw(seed, name, i)
        u = Fraction(r[0] | (r[1] << 32), 1 << 64)
        bits = round_bits(fmt, a + (b - a) * u)  # exact rational value, rounded once
        v = value_of(fmt, bits)
        out.append(highest if v >= b else lowest if v < a else bits)
    return out


def mpf_to_fraction(x) -> Fraction:
    sign, man, exp, _ = mpmath.mpf(x)._mpf_  # exact binary value: (-1)^sign * man * 2^exp
    v = Fraction(int(man)) * Fraction(2) ** exp
    return -v if sign else v


def normal(seed, name, fmt, n, mean, stddev):
    mpmath.mp.prec = 320
    out = []
    for i in range(n):
        r = draw(seed, name, i // 2)
        u1 = mpmath.mpf(((r[0] | (r[1] << 32)) + 1)) / mpmath.mpf(2) ** 64
        u2 = mpmath.mpf(r[2] | (r[3] << 32)) / mpmath.mpf(2) ** 64
        radius = mpmath.sqrt(-2 * mpmath.log(u1))
        theta = 2 * mpmath.pi * u2
        z = radius * (mpmath.cos(theta) if i % 2 == 0 else mpmath.sin(theta))
        out.append(round_bits(fmt, mpf_to_fraction(mean + stddev * z)))
    return out


def uniform_int(seed, name, n, lo, hi):
    out = []
    for i in range(n):
        r = draw(seed, name, i)
        out.append(lo + (((r[0] | (r[1] << 32)) * (hi - lo)) >> 64))
    return out


def special_bits(fmt, kind):
    eb, fb, bias, has_inf, _, shift = FORMATS[fmt]
    sign = 1 << (eb + fb)
    top = (1 << eb) - 1
    p = {
        "pos_zero": 0,
        "neg_zero": sign,
        "pos_inf": top << fb,
        "neg_inf": sign | (top << fb),
        "nan": (top << fb) | (1 << (fb - 1)) if has_inf else (top << fb) | ((1 << fb) - 1),
        "min_subnormal": 1,
        "max_finite": ((top - 1) << fb) | ((1 << fb) - 1) if has_inf
        else (top << fb) | ((1 << fb) - 2),
    }[kind]
    return p << shift


def special_mix(base, seed, name, fmt, kinds, fraction):
    threshold = int(Fraction(fraction) * (1 << 32))
    out = list(base)
    for i in range(len(out)):
        r = draw(seed, name + "#specials", i)
        if r[0] < threshold:
            out[i] = special_bits(fmt, kinds[(r[1] * len(kinds)) >> 32])
    return out


PIN_SEED = 0x5EED0F1A7E57
ORDER = ["f64", "f32", "tf32", "bf16", "f16", "e4m3", "e5m2"]


def digests():
    sha = lambda fmt, words: hashlib.sha256(to_bytes(fmt, words)).hexdigest()  # noqa: E731
    result = {}
    for fmt in ORDER:
        result[("uniform", fmt)] = sha(fmt, uniform(PIN_SEED, "pinned.uniform", fmt, 1023, -2, 2))
        result[("normal", fmt)] = sha(fmt, normal(PIN_SEED, "pinned.normal", fmt, 1023, 0, 1))
    result[("ids", "i32")] = sha("i32", uniform_int(PIN_SEED, "pinned.ids", 1023, 0, 50257))
    result[("pos", "i64")] = sha("i64", uniform_int(PIN_SEED, "pinned.pos", 1023, -4096, 4096))
    kinds = ["pos_zero", "neg_zero", "pos_inf", "neg_inf", "nan", "min_subnormal", "max_finite"]
    base = normal(PIN_SEED, "pinned.mix", "f16", 1023, 0, 1)
    result[("mix", "f16")] = sha("f16", special_mix(base, PIN_SEED, "pinned.mix", "f16", kinds,
                                                    0.125))
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", metavar="INPUTS_TEST_CC",
                        help="compare with the pinned literals of this test file")
    args = parser.parse_args()

    # Self-test against the Random123 known answers before trusting anything else.
    assert philox4x32_10([0] * 4, [0, 0]) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    assert philox4x32_10([M32] * 4, [M32] * 2) == [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]

    got = digests()
    for (what, fmt), hexdigest in got.items():
        print(f"{what:8} {fmt:5} {hexdigest}")
    if not args.check:
        return 0
    text = open(args.check, encoding="utf-8").read()
    pinned = re.findall(r'"([0-9a-f]{64})"', text)
    # The test lists pins per format as {dtype, uniform, normal}, then ids, pos and mix.
    expected = [got[("uniform", f)] if k == 0 else got[("normal", f)]
                for f in ORDER for k in (0, 1)]
    expected += [got[("ids", "i32")], got[("pos", "i64")], got[("mix", "f16")]]
    if pinned != expected:
        print(f"MISMATCH: {len(pinned)} pinned literals differ from the recomputation",
              file=sys.stderr)
        return 1
    print(f"all {len(expected)} pinned digests reproduced")
    return 0


if __name__ == "__main__":
    sys.exit(main())
