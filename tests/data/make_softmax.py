#!/usr/bin/env python3
"""Known answers for F12 (softmax, log-sum-exp, cross-entropy), F13 (z-loss and its gradient)
and F14 (soft-capping), and the fused row: loss and gradient with respect to the raw logits
through an optional soft-cap.

Run from anywhere: writes softmax.json beside this script. mpmath 1.3.0; outputs printed to 50
significant digits. Inputs are exact doubles (float.hex()) from random.Random(seed).

Independent forms: Z = fsum(exp(z_i)) directly, without max-subtraction (mpmath's exponent
range holds e^5000), at 80 digits; log Z = log(Z); p_i = exp(z_i) / Z; soft-cap derivative as
sech(z/cap)^2. The gradient formula is cross-checked here against mpmath.diff of the loss on
the rows where every entry is resolvable by numerical differentiation.

Rows:
  spread1e4    64 logits spanning [-5000, 5000], target at the lowest logit (CE ~ 1e4)
  z_near_1     64 logits with log Z ~ 1e-6 (Z ~ 1): the z-loss penalty nearly vanishes
  vocab32000   a full 32000-entry vocabulary row (Llama 2's size); the JSON stays < 2 MB by
               storing the logits once and the probabilities/gradient at 500+ sampled indices
               (every 61st, the target and the arg-max); the C++ test also checks the sum of
               the full gradient
  vocab32000_cap30  the same logits through Gemma 2's final-logit soft-cap 30
  cap30, cap50 16 logits of scale 40 (many beyond the cap) through soft-caps 30 and 50
"""
import json
import os
import random

import mpmath
from mpmath import mp, mpf

mp.dps = 50
HERE = os.path.dirname(os.path.abspath(__file__))
WORK = 80


def s(v):
    return mpmath.nstr(v, 50)


def loss_parts(z, target, lam, cap):
    """(log Z, CE, loss, p, grad) at the working precision; z are mpf."""
    zc = [cap * mpmath.tanh(v / cap) for v in z] if cap else list(z)
    big_z = mpmath.fsum(mpmath.exp(v) for v in zc)
    log_z = mpmath.log(big_z)
    ce = -zc[target] + log_z
    loss = ce + lam * log_z**2
    p = [mpmath.exp(v) / big_z for v in zc]
    grad = []
    for j, pj in enumerate(p):
        g = pj - (1 if j == target else 0) + 2 * lam * log_z * pj
        if cap:
            g *= mpmath.sech(z[j] / cap) ** 2
        grad.append(g)
    return log_z, ce, loss, p, grad


def check_with_diff(z, target, lam, cap, grad):
    with mp.workdps(120):
        zz = [mpf(v) for v in z]
        for j in range(0, len(z), max(1, len(z) // 8)):
            def f(t, j=j):
                w = list(zz)
                w[j] = t
                return loss_parts(w, target, lam, cap)[2]
            d = mpmath.diff(f, zz[j])
            assert abs(d - grad[j]) <= mpf(10)**-55 * max(abs(d), mpf(10)**-20), (j, d, grad[j])


def row(name, z, target, lam, cap=None, index=None, z_from=None, diff_check=False):
    with mp.workdps(WORK):
        zm = [mpf(v) for v in z]
        log_z, ce, loss, p, grad = loss_parts(zm, target, mpf(lam), mpf(cap) if cap else None)
        if diff_check:
            check_with_diff(z, target, mpf(lam), mpf(cap) if cap else None, grad)
    idx = index if index is not None else list(range(len(z)))
    out = {"name": name, "target": target, "lambda": lam.hex(),
           "cap": cap.hex() if cap else None, "log_z": s(log_z), "ce": s(ce), "loss": s(loss),
           "index": idx, "p": [s(p[i]) for i in idx], "grad": [s(grad[i]) for i in idx]}
    if z_from:
        out["z_from"] = z_from
    else:
        out["z"] = [v.hex() for v in z]
    return out


def main():
    rows = []
    r = random.Random(424242)
    z = [-5000.0, 5000.0] + [r.uniform(-5000.0, 5000.0) for _ in range(62)]
    r.shuffle(z)
    rows.append(row("spread1e4", z, z.index(min(z)), 1e-4))

    r = random.Random(515151)
    w = [r.uniform(0.1, 1.0) for _ in range(64)]
    with mp.workdps(WORK):
        total = mpmath.fsum(w)
        z = [float(mpmath.log(mpf(v) / total) + mpf("1e-6")) for v in w]
    rows.append(row("z_near_1", z, 17, 1e-3, diff_check=True))

    r = random.Random(606060)
    z = [r.gauss(0.0, 2.0) for _ in range(32000)]
    target = 12345
    arg_max = z.index(max(z))
    idx = sorted(set(range(0, 32000, 61)) | {target, arg_max})
    rows.append(row("vocab32000", z, target, 1e-4, index=idx))
    rows.append(row("vocab32000_cap30", z, target, 1e-4, cap=30.0, index=idx,
                    z_from="vocab32000"))

    r = random.Random(717171)
    z = [r.gauss(0.0, 40.0) for _ in range(16)]
    for cap in (30.0, 50.0):
        rows.append(row(f"cap{cap:g}", z, 3, 1e-4, cap=cap, diff_check=True))

    caps = []
    for cap in (30.0, 50.0):
        for zv in (100.0, -100.0, 1e-3, -1e-3, 0.0, 29.5, -49.75, 1e4, -1e4):
            with mp.workdps(WORK):
                c, x = mpf(cap), mpf(zv)
                caps.append({"cap": cap.hex(), "z": zv.hex(), "y": s(c * mpmath.tanh(x / c)),
                             "grad": s(mpmath.sech(x / c) ** 2)})

    out = {"generator": "tests/data/make_softmax.py", "mpmath": mpmath.__version__,
           "digits": 50, "rows": rows, "softcap": caps}
    with open(os.path.join(HERE, "softmax.json"), "w") as f:
        json.dump(out, f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()
