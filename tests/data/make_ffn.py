#!/usr/bin/env python3
"""Known answers for F03 (ReLU FFN with biases), F04 (bias-free FFN, four activations) and F05
(ReGLU, GeGLU, GeGLU-tanh, SwiGLU).

Run from anywhere: writes ffn.json beside this script. mpmath 1.3.0; outputs printed to 50
significant digits. Inputs are exact doubles (float.hex()) from random.Random(seed).

Independent evaluation: the first-layer products x W are exact rationals (Fraction sums of exact
double products); activations are evaluated from their definitions (GELU = x * ncdf(x),
GELU-tanh printed form at 200 digits, SiLU = x / (1 + exp(-x))) at 80+ digits; the second
product is summed at 80 digits. The script asserts that every output and pre-activation is
well conditioned (sum of |terms| / |sum| <= 1e3), so 1e-40 is a meaningful tolerance for a
50-digit reference.
"""
import json
import os
import random
from fractions import Fraction

import mpmath
from mpmath import mp, mpf

mp.dps = 50
HERE = os.path.dirname(os.path.abspath(__file__))
WORK = 80
N, D, F, E = 3, 8, 16, 8
MAX_COND = 1000


def s(v):
    return mpmath.nstr(v, 50)


def act(name, a):
    if name == "relu":
        return a if a > 0 else mpf(0)
    if name == "gelu":
        return a * mpmath.ncdf(a)
    if name == "gelu_tanh":
        with mp.workdps(200):
            k = mpmath.sqrt(2 / mpmath.pi)
            return +(mpf("0.5") * a * (1 + mpmath.tanh(k * (a + mpf("0.044715") * a**3))))
    if name == "silu":
        return a / (1 + mpmath.exp(-a))
    raise ValueError(name)


def mat(r, rows, cols, sd):
    return [[r.gauss(0.0, sd) for _ in range(cols)] for _ in range(rows)]


def first_layer(x, w, bias=None):
    """Exact x W (+ b) as Fractions, and its condition number."""
    out, cond = [], 0.0
    for i in range(len(x)):
        row = []
        for j in range(len(w[0])):
            terms = [Fraction(x[i][k]) * Fraction(w[k][j]) for k in range(len(w))]
            if bias is not None:
                terms.append(Fraction(bias[j]))
            v = sum(terms)
            cond = max(cond, float(sum(abs(t) for t in terms) / abs(v)) if v else 0.0)
            row.append(v)
        out.append(row)
    return out, cond


def second_layer(h, w2, bias=None):
    out, cond = [], 0.0
    for i in range(len(h)):
        row = []
        for j in range(len(w2[0])):
            terms = [h[i][k] * mpf(w2[k][j]) for k in range(len(w2))]
            if bias is not None:
                terms.append(mpf(bias[j]))
            v = mpmath.fsum(terms)
            cond = max(cond, float(mpmath.fsum(abs(t) for t in terms) / abs(v)))
            row.append(v)
        out.append(row)
    return out, cond


def q(v):
    return mpf(v.numerator) / v.denominator


def hexm(m):
    return [[v.hex() for v in row] for row in m]


def strm(m):
    return [[s(v) for v in row] for row in m]


def make(seed):
    r = random.Random(seed)
    x = mat(r, N, D, 1.0)
    w1 = mat(r, D, F, D**-0.5)
    b1 = [r.gauss(0.0, 0.1) for _ in range(F)]
    w2 = mat(r, F, E, F**-0.5)
    b2 = [r.gauss(0.0, 0.1) for _ in range(E)]
    v = mat(r, D, F, D**-0.5)
    conds = []
    out = {"seed": seed, "x": hexm(x), "w1": hexm(w1), "b1": [t.hex() for t in b1],
           "w2": hexm(w2), "b2": [t.hex() for t in b2], "v": hexm(v)}
    with mp.workdps(WORK):
        pre, c = first_layer(x, w1, b1)
        conds.append(c)
        h = [[act("relu", q(t)) for t in row] for row in pre]
        y, c = second_layer(h, w2, b2)
        conds.append(c)
        out["ffn_relu_bias"] = strm(y)
        a, c = first_layer(x, w1)
        conds.append(c)
        b, c = first_layer(x, v)
        conds.append(c)
        for name in ("relu", "gelu", "gelu_tanh", "silu"):
            h = [[act(name, q(t)) for t in row] for row in a]
            y, c = second_layer(h, w2)
            conds.append(c)
            out["ffn_" + name] = strm(y)
            g = [[act(name, q(ta)) * q(tb) for ta, tb in zip(ra, rb)] for ra, rb in zip(a, b)]
            y, c = second_layer(g, w2)
            conds.append(c)
            out["glu_" + name] = strm(y)
    return out, max(conds)


def main():
    seed = 31337
    while True:
        data, cond = make(seed)
        if cond <= MAX_COND:
            break
        seed += 1
    data["max_condition"] = cond
    out = {"generator": "tests/data/make_ffn.py", "mpmath": mpmath.__version__, "digits": 50,
           "shapes": {"tokens": N, "d": D, "d_ff": F, "d_out": E}, "case": data}
    with open(os.path.join(HERE, "ffn.json"), "w") as f:
        json.dump(out, f, indent=0)
        f.write("\n")
    print("seed", seed, "max condition", cond)


if __name__ == "__main__":
    main()
