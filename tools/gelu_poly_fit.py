#!/usr/bin/env python3
"""The two polynomials of fast/math-inl.h's GeluSmallF, GELU's exponential-free form for |x| ≤ 3.

1/Φ(−t) = E(t²)·M(t) for t = |x| ≤ T = 3, with
  E(y) ≈ e^{y/2} on y ∈ [0, T²], degree 12, E(0) = 1: the growth (1 … e^{4.5} ≈ 90), all
       coefficients positive, so that Horner or Estrin at y ≥ 0 adds only positive terms;
  M(t) ≈ e^{−t²/2}/Φ(−t) = 2/(erfc(t/√2)·e^{t²/2}) on [0, T], degree 10, M(0) = 2: the inverse
       of the Mills ratio over √(2π), smooth and increasing from 2 to 8.2 like t√(2π) for large
       t; its fitted coefficients change sign but their terms' sum is at most 1.6 times M.
A single polynomial for 1/Φ(−t) (range 2 … 741) needs degree 18 and cancels: its terms' sum
reaches 8700 times its value, so its evaluation would carry thousands of ulps; Φ(−t) itself or
erf-based forms cancel likewise for x < 0 (Φ(−3) = 0.00135 = ½ − 0.49865).

Each fit minimizes the maximum relative error over 2000 Chebyshev points by Lawson's iteration
(weighted least squares, weights multiplied by the error each step), in the monomial basis of
the scaled variable (y/T² or t/T, so that the columns are of one size). The coefficients are
then fixed to f32 one at a time, highest degree first, refitting the free lower ones after
each, so that the rounded set keeps the fit (the method of tools/gelu_mills_fit.py). The
constant terms 1 and 2 are exact, so that 1/Φ(−t) = 2 exactly for |x| < 2^-24 (GELU(x) = x/2
there, rounded once). Prints each set, its relative error (max over 20001 points, mpmath
with the f32 coefficients) and the largest ratio of the terms' absolute sum to the value
(the factor by which evaluation roundings can grow). Needs mpmath and numpy.
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 40
T = 3.0
N = 2000


def fit(fun, width, degree, c0, var):
    """Polynomial in var(t) of the given degree, constant c0, relative minimax on [0, T]."""
    ts = (1 - np.cos(np.linspace(0, np.pi, N))) / 2 * T
    f = np.array([float(fun(mp.mpf(t))) for t in ts])
    u = var(ts) / width
    A = np.stack([u**i for i in range(1, degree + 1)], 1)
    scale = width ** np.arange(1, degree + 1)

    def solve(fixed, iters=150):
        free = [i for i in range(degree) if i not in fixed]
        w = np.ones(N)
        best = (np.inf, None)
        for _ in range(iters):
            b = f - c0
            for i, v in fixed.items():
                b = b - A[:, i] * v * scale[i]
            s = w / f
            sol = np.linalg.lstsq(A[:, free] * s[:, None], b * s, rcond=None)[0]
            c = np.zeros(degree)
            for i, v in fixed.items():
                c[i] = v * scale[i]
            c[free] = sol
            err = (A @ c + c0 - f) / f
            e = np.max(np.abs(err))
            if e < best[0]:
                best = (e, c / scale)
            w = w * np.abs(err)
            w = np.maximum(w / w.sum(), 1e-300)
        return best[1]

    fixed = {}
    for i in range(degree - 1, -1, -1):
        fixed[i] = float(np.float32(solve(fixed)[i]))
    return [c0] + [fixed[i] for i in range(degree)]


def check(name, fun, coef, var):
    worst, cond = 0, 0
    for t in np.linspace(0, T, 20001):
        v = mp.mpf(var(t))
        p = sum(mp.mpf(c) * v**i for i, c in enumerate(coef))
        a = sum(abs(mp.mpf(c)) * v**i for i, c in enumerate(coef))
        ex = fun(mp.mpf(t))
        worst = max(worst, abs(p / ex - 1))
        cond = max(cond, a / abs(p))
    print("%s: %s" % (name, ", ".join(repr(float(c)) for c in coef)))
    print("  relative error %.3g (%.3f ulp of f32), terms' sum / value <= %.3f"
          % (worst, worst / 2**-24, cond))


def e_half(t):
    return mp.exp(t * t / 2)


def m_inv_mills(t):
    return 2 / (mp.erfc(t / mp.sqrt(2)) * mp.exp(t * t / 2))


sq = lambda t: t * t  # noqa: E731
ident = lambda t: t  # noqa: E731
e = fit(e_half, T * T, 12, 1.0, sq)
check("E (in y = t^2, constant first)", e_half, e, sq)
m = fit(m_inv_mills, T, 10, 2.0, ident)
check("M (in t, constant first)", m_inv_mills, m, ident)
