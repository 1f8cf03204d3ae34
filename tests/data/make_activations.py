#!/usr/bin/env python3
"""Known answers for F06 (activations.h) and their derivatives (activations_grad.h).

Run from anywhere: writes activations.json beside this script. mpmath 1.3.0, mp.dps = 50 for
the output; each value is computed with guard digits (workdps) and printed to 50 significant
digits. Inputs are exact doubles written with float.hex().

Independent forms (not the C++ evaluation):
  GELU(x)       = x * Phi(x) with mpmath.ncdf
  GELU-tanh(x)  = 0.5 x (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3))), the printed form, evaluated
                  with enough digits (700) that 1 + tanh keeps > 50 digits even at x = -20
  sigmoid, SiLU, Swish_beta: x / (1 + exp(-beta x))
  derivatives   : mpmath.diff (numerical differentiation at raised precision), cross-checked
                  here against the closed forms.
"""
import json
import os

import mpmath
from mpmath import mp, mpf

mp.dps = 50
HERE = os.path.dirname(os.path.abspath(__file__))


def s(v):
    return mpmath.nstr(v, 50)


def gelu(x):
    return x * mpmath.ncdf(x)


def gelu_tanh(x):
    with mp.workdps(700):
        k = mpmath.sqrt(2 / mpmath.pi)
        u = k * (x + mpf("0.044715") * x**3)
        return +(mpf("0.5") * x * (1 + mpmath.tanh(u)))


def swish(x, beta):
    return x / (1 + mpmath.exp(-beta * x))


def sigmoid(x):
    return 1 / (1 + mpmath.exp(-x))


def deriv(f, x):
    with mp.workdps(120):
        return +mpmath.diff(f, mpf(x))


def closed_gelu_grad(x):
    return mpmath.ncdf(x) + x * mpmath.npdf(x)


def closed_silu_grad(x):
    sg = sigmoid(x)
    return sg * (1 + x * (1 - sg))


POINTS = [-20.0, -10.0, -5.3, -3.0, -1.0, -0.5, -1e-8, 0.0, 1e-8, 0.5, 1.0, 2.5, 5.3, 10.0,
          0.125, -2.0**-30]
SWISH = [(-5.3, 1.702), (-1.0, 0.5), (0.75, 1.702), (3.0, 2.0), (1e-8, 1.0), (-8.0, 1.0)]


def main():
    points = []
    for xd in POINTS:
        with mp.workdps(120):
            x = mpf(xd)
            g = gelu(x)
            gt = gelu_tanh(x)
            sl = swish(x, 1)
            sg = sigmoid(x)
            dg = deriv(gelu, xd)
            dgt = deriv(gelu_tanh, xd)
            dsl = deriv(lambda t: swish(t, 1), xd)
            for got, want in ((dg, closed_gelu_grad(x)), (dsl, closed_silu_grad(x))):
                assert abs(got - want) <= mpf(10)**-60 * max(abs(want), 1), (xd, got, want)
            points.append({"x": xd.hex(), "gelu": s(g), "gelu_tanh": s(gt), "silu": s(sl),
                           "sigmoid": s(sg), "gelu_grad": s(dg), "gelu_tanh_grad": s(dgt),
                           "silu_grad": s(dsl)})
    swish_rows = []
    for xd, bd in SWISH:
        with mp.workdps(120):
            x, b = mpf(xd), mpf(bd)
            swish_rows.append({"x": xd.hex(), "beta": bd.hex(), "y": s(swish(x, b)),
                               "grad": s(deriv(lambda t: swish(t, b), xd))})
    out = {"generator": "tests/data/make_activations.py", "mpmath": mpmath.__version__,
           "digits": 50, "points": points, "swish": swish_rows}
    with open(os.path.join(HERE, "activations.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
