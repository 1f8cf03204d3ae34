#!/usr/bin/env python3
"""The rational R(t) = P(t)/Q(t) of fast/math-inl.h's GeluF.

R(t) = erfc(t/√2)·e^{t²/2}/2 = Φ(−t)·e^{t²/2} on [0, 14.5] (GELU(x) = x·Φ(x) underflows below
x ≈ −14.4), P of degree 5 with P(0) = ½ (R(0) = ½), Q of degree 6 with Q(0) = 1. The fit
minimizes the maximum relative error over 2500 Chebyshev points by Lawson's iteration on the
linearized problem P − R·Q = 0 (each step a weighted least-squares solve, weights divided by the
previous Q so that the residual approximates the relative error of P/Q). The coefficients are
then fixed to f32 one at a time, highest index first (q6 … q1, p5 … p1), refitting the
free ones after each, so that the rounded set keeps the fit (0.10 ulp of f32, where rounding the unconstrained fit's
coefficients gave 0.85). Needs mpmath and numpy; prints the coefficients and the error.
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 30
T, N, n, m = 14.5, 2500, 5, 6
ts = (1 - np.cos(np.linspace(0, np.pi, N))) / 2 * T
f = np.array([float(mp.erfc(mp.mpf(t) / mp.sqrt(2)) / 2 * mp.exp(mp.mpf(t) ** 2 / 2)) for t in ts])


def solve(fixed, iters=60):
    """Unknowns p0 … pn, q1 … qm (q0 = 1); fixed: index → value."""
    w = np.ones(N)
    qv = np.ones(N)
    A = np.stack([ts**i for i in range(n + 1)] + [-f * ts**j for j in range(1, m + 1)], 1)
    free = [i for i in range(n + 1 + m) if i not in fixed]
    for _ in range(iters):
        b = f.copy()
        for i, v in fixed.items():
            b = b - A[:, i] * v
        s = w / (f * qv)
        sol = np.linalg.lstsq(A[:, free] * s[:, None], b * s, rcond=None)[0]
        c = np.zeros(n + 1 + m)
        for i, v in fixed.items():
            c[i] = v
        c[free] = sol
        p, q = c[: n + 1], np.concatenate([[1.0], c[n + 1 :]])
        qv = np.polyval(q[::-1], ts)
        err = (np.polyval(p[::-1], ts) / qv - f) / f
        w = w * np.abs(err)
        w = np.maximum(w / w.sum(), 1e-300)
    return c, np.max(np.abs(err))


fixed = {0: 0.5}
for i in range(n + m, 0, -1):
    fixed[i] = float(np.float32(solve(fixed)[0][i]))
c, e = solve(fixed, 1)
print("P:", ", ".join(repr(float(x)) for x in c[: n + 1]))
print("Q:", ", ".join(repr(float(x)) for x in np.concatenate([[1.0], c[n + 1 :]])))
print("max relative error: %.3g (%.3f ulp of f32)" % (e, e / 2**-24))
