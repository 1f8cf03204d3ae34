#!/usr/bin/env python3
"""Known answers for F07–F09 (reference/positional.h), computed with mpmath at 50 digits.

Writes positional.json beside this script. Inputs are exact doubles (float.hex()); expected real
values are 50-significant-digit decimals; bucket indices are integers.

 - F07 sinusoidal: PE(p, 2i) = sin(p / base^(2i/d)), PE(p, 2i+1) = cos(p / base^(2i/d)).
 - F08 learned absolute: v_x + u_i (dyadic inputs: every sum is exact).
 - F09 Shaw et al.: e_ij = (x_i W_Q)(x_j W_K + w[clip(j − i, −k, k)])ᵀ / sqrt(d_k), with
   mpmath matrices.
 - F09 T5 buckets: the published rule (Mesh TensorFlow / HF `_relative_position_bucket`)
   evaluated with mpmath at 50 digits; where the log quotient is within 1e-30 of an integer,
   the floor is decided by the exact rational identity (n/me)^E = (md/me)^m. Alongside, the
   bucket a float32 evaluation gives (every operation correctly rounded to float32, the
   constant ln(md/me) too), to record where the published float32 code departs from the rule.
"""
import json
import math
import os
import random
from fractions import Fraction

from mpmath import mp, mpf, matrix, nstr, sqrt, sin, cos, log, floor, workprec

mp.dps = 50


def s50(v):
    return nstr(v, 50)


def sinusoidal(p, d, base):
    out = []
    for i in range(d // 2):
        angle = mpf(p) / mpf(base) ** (mpf(2 * i) / d)
        out += [sin(angle), cos(angle)]
    return out


def t5_bucket(rel, bidirectional, num_buckets, max_distance):
    b = num_buckets // 2 if bidirectional else num_buckets
    offset = b if (bidirectional and rel > 0) else 0
    n = abs(rel) if bidirectional else max(-rel, 0)
    me = b // 2
    if n < me:
        return offset + n
    e = b - me
    v = log(mpf(n) / me) / log(mpf(max_distance) / me) * e
    m = int(floor(v))
    near = int(floor(v + mpf("0.5")))
    if abs(v - near) < mpf("1e-30"):  # decide exactly
        m = near if Fraction(n, me) ** e >= Fraction(max_distance, me) ** near else near - 1
    return offset + min(me + m, b - 1)


def f32(x):
    with workprec(24):
        return +mpf(x)


def t5_bucket_float32(rel, bidirectional, num_buckets, max_distance):
    b = num_buckets // 2 if bidirectional else num_buckets
    offset = b if (bidirectional and rel > 0) else 0
    n = abs(rel) if bidirectional else max(-rel, 0)
    me = b // 2
    if n < me:
        return offset + n
    with workprec(200):
        q = f32(mpf(n) / me)
        la = f32(log(q))
        c = f32(math.log(max_distance / me))  # a Python double, then float32
        v = f32(f32(la / c) * (b - me))
        val = me + int(floor(v))
    return offset + min(val, b - 1)


def dyadic(rng, bits=8):
    return rng.randint(-(1 << bits), 1 << bits) / (1 << (bits - 2))


def main():
    rng = random.Random(7)
    data = {"generator": "make_positional.py", "dps": 50}

    sin_cases = []
    for d, base, positions in [(16, 10000, [0, 1, 5, 100, 12345, 1000000]),
                               (64, 10000, [999999, 1000000]),
                               (8, 500, [3])]:
        for p in positions:
            sin_cases.append({"d": d, "base": float(base).hex(), "position": float(p).hex(),
                              "pe": [s50(v) for v in sinusoidal(p, d, base)]})
    data["sinusoidal"] = sin_cases

    vocab, max_pos, width = 5, 6, 4
    v = [[dyadic(rng) for _ in range(width)] for _ in range(vocab)]
    u = [[dyadic(rng) for _ in range(width)] for _ in range(max_pos)]
    ids, positions = [3, 0, 4, 3, 1], [0, 1, 2, 5, 4]
    embed = [[s50(mpf(v[x][c]) + mpf(u[i][c])) for c in range(width)]
             for x, i in zip(ids, positions)]
    data["learned"] = {"token_table": [[w.hex() for w in row] for row in v],
                       "position_table": [[w.hex() for w in row] for row in u],
                       "ids": ids, "positions": positions, "embed": embed}

    n, d_model, d_k, k = 6, 3, 2, 2
    x = [[rng.uniform(-1, 1) for _ in range(d_model)] for _ in range(n)]
    wq = [[rng.uniform(-1, 1) for _ in range(d_k)] for _ in range(d_model)]
    wk = [[rng.uniform(-1, 1) for _ in range(d_k)] for _ in range(d_model)]
    rel = [[rng.uniform(-1, 1) for _ in range(d_k)] for _ in range(2 * k + 1)]
    q = matrix(x) * matrix(wq)
    kk = matrix(x) * matrix(wk)
    logits = []
    for i in range(n):
        row = []
        for j in range(n):
            a = matrix(rel)[max(-k, min(k, j - i)) + k, :]
            row.append(s50((q[i, :] * (kk[j, :] + a).T)[0, 0] / sqrt(d_k)))
        logits.append(row)
    hexm = lambda m: [[w.hex() for w in r] for r in m]
    data["shaw"] = {"x": hexm(x), "w_q": hexm(wq), "w_k": hexm(wk), "rel_k": hexm(rel),
                    "max_relative_position": k, "logits": logits}

    bucket_cases = []
    distances = list(range(-200, 201)) + [-1000, 1000, -10**6, 10**6, -(1 << 40), 1 << 40]
    for bidirectional, num_buckets, max_distance in [(True, 32, 128), (False, 32, 128),
                                                      (True, 64, 256), (False, 36, 50),
                                                      (True, 72, 50), (False, 48, 81)]:
        exact = [t5_bucket(r, bidirectional, num_buckets, max_distance) for r in distances]
        fl = [t5_bucket_float32(r, bidirectional, num_buckets, max_distance) for r in distances]
        bucket_cases.append({
            "bidirectional": bidirectional, "num_buckets": num_buckets,
            "max_distance": max_distance, "relative_positions": distances, "buckets": exact,
            "float32_differs_at": [r for r, a, b in zip(distances, exact, fl) if a != b],
            "float32_buckets_there": [b for a, b in zip(exact, fl) if a != b]})
    data["t5_buckets"] = bucket_cases

    heads, num_buckets = 2, 32
    table = [[dyadic(rng) for _ in range(heads)] for _ in range(num_buckets)]
    bias_cases = []
    for bidirectional, q_len, k_len, offset in [(True, 3, 5, 0), (False, 3, 5, 4),
                                                (True, 2, 300, 150)]:
        bias = [[[table[t5_bucket(j - (offset + i), bidirectional, num_buckets, 128)][h].hex()
                  for j in range(k_len)] for i in range(q_len)] for h in range(heads)]
        bias_cases.append({"bidirectional": bidirectional, "query_len": q_len,
                           "key_len": k_len, "query_offset": offset, "bias": bias})
    data["t5_bias"] = {"table": hexm(table), "max_distance": 128, "cases": bias_cases}

    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "positional.json")
    with open(out, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
