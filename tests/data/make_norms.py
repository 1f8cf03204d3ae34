#!/usr/bin/env python3
"""Known answers for F01 LayerNorm, F02 RMSNorm (and its Gemma (1 + gamma) variant) and E01.

Run from anywhere: writes norms.json beside this script. mpmath 1.3.0; outputs are printed to
50 significant digits (mp.dps = 50). Inputs are exact doubles (float.hex()) drawn from
random.Random with fixed seeds.

Independence from the C++: means and variances are computed EXACTLY as rational numbers
(fractions.Fraction of the exact double inputs), so the cancellation cases (1e6 + k*2^-20)
have no rounding at all before the square root; the square root, division and weights are then
evaluated at 80 digits and rounded to 50 for output.
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


def s(v):
    return mpmath.nstr(v, 50)


def hexes(xs):
    return [float(v).hex() for v in xs]


def q(v):
    """mpf of a Fraction at the working precision."""
    return mpf(v.numerator) / v.denominator


def layernorm(x, gamma, beta, eps):
    d = len(x)
    fx = [Fraction(v) for v in x]
    mean = sum(fx) / d
    var = sum((v - mean) ** 2 for v in fx) / d
    with mp.workdps(WORK):
        sigma = mpmath.sqrt(q(var) + mpf(eps))
        return [s(q(v - mean) / sigma * mpf(g) + mpf(b)) for v, g, b in zip(fx, gamma, beta)]


def rms_sigma(x, eps, mean=True):
    sq = sum(Fraction(v) ** 2 for v in x)
    if mean:
        sq /= len(x)
    return mpmath.sqrt(q(sq) + mpf(eps))


def rmsnorm(x, weight, eps):
    with mp.workdps(WORK):
        sigma = rms_sigma(x, eps)
        return [s(mpf(v) / sigma * w) for v, w in zip(x, weight)]


def rmsnorm_e01(x, gamma, eps):
    with mp.workdps(WORK):
        sigma = rms_sigma(x, eps, mean=False)
        return [s(mpf(v) / sigma * mpf(g)) for v, g in zip(x, gamma)]


def main():
    ln = []
    r = random.Random(20240601)
    x = [r.gauss(0.5, 2.0) for _ in range(8)]
    g = [r.gauss(1.0, 0.2) for _ in range(8)]
    b = [r.gauss(0.0, 0.2) for _ in range(8)]
    ln.append({"name": "d8", "eps": (1e-5).hex(), "x": hexes(x), "gamma": hexes(g),
               "beta": hexes(b), "y": layernorm(x, g, b, 1e-5)})
    # Cancellation: 1e6 + k*2^-20 (exact doubles; sigma ~ 5e-4 against a mean of 1e6). With
    # d = 64 the mean k-sum divides exactly; with d = 100 it does not (see norms_test.cc).
    for d, eps, seed in ((64, 0.0, 1), (64, 1e-12, 2), (100, 1e-12, 3)):
        r = random.Random(7000 + seed)
        x = [1e6 + r.randint(-1000, 1000) * 2.0**-20 for _ in range(d)]
        g = [r.gauss(1.0, 0.2) for _ in range(d)]
        b = [r.gauss(0.0, 0.2) for _ in range(d)]
        ln.append({"name": f"cancel_d{d}_eps{eps:g}", "eps": eps.hex(), "x": hexes(x),
                   "gamma": hexes(g), "beta": hexes(b), "y": layernorm(x, g, b, eps)})

    rms, gemma, e01 = [], [], []
    r = random.Random(20240602)
    x = [r.gauss(0.0, 1.5) for _ in range(8)]
    g = [r.gauss(1.0, 0.2) for _ in range(8)]
    rms.append({"name": "d8", "eps": (1e-6).hex(), "x": hexes(x), "gamma": hexes(g),
                "y": rmsnorm(x, [mpf(v) for v in g], 1e-6)})
    e01.append({"name": "d8", "eps": (1e-6).hex(), "x": hexes(x), "gamma": hexes(g),
                "y": rmsnorm_e01(x, g, 1e-6)})
    gg = [r.gauss(0.0, 0.1) for _ in range(8)]
    gemma.append({"name": "d8", "eps": (1e-6).hex(), "x": hexes(x), "gamma": hexes(gg),
                  "y": rmsnorm(x, [1 + mpf(v) for v in gg], 1e-6)})
    # d = 4096 (Llama / Mistral width). With eps = 1e-5 on unit-scale x the eps term shifts
    # the result by ~5e-6 relative; with eps = 1e-6 the row is scaled to 1e-3 so that
    # mean(x^2) ~ 1e-6 and eps matters at first order.
    for eps, scale, seed in ((1e-5, 1.0, 11), (1e-6, 1e-3, 12)):
        r = random.Random(9000 + seed)
        x = [r.gauss(0.0, scale) for _ in range(4096)]
        g = [r.gauss(1.0, 0.1) for _ in range(4096)]
        rms.append({"name": f"d4096_eps{eps:g}", "eps": eps.hex(), "x": hexes(x),
                    "gamma": hexes(g), "y": rmsnorm(x, [mpf(v) for v in g], eps)})
        if eps == 1e-6:
            gg = [r.gauss(0.0, 0.1) for _ in range(4096)]
            gemma.append({"name": "d4096_eps1e-06", "eps": eps.hex(), "x": hexes(x),
                          "gamma": hexes(gg), "y": rmsnorm(x, [1 + mpf(v) for v in gg], eps)})

    out = {"generator": "tests/data/make_norms.py", "mpmath": mpmath.__version__, "digits": 50,
           "layernorm": ln, "rmsnorm": rms, "rmsnorm_gemma": gemma, "rmsnorm_literal_e01": e01}
    with open(os.path.join(HERE, "norms.json"), "w") as f:
        json.dump(out, f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()
