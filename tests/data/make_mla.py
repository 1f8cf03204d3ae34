#!/usr/bin/env python3
"""Known answers for F19 MLA (tests/reference/mla_test.cc), computed with mpmath at 50 digits.

The naive form, written from equations 37-47 of seeds/004 in the paper's column-vector form
(W h). The JSON stores each weight in the project's row-vector layout (in x out, so that
x W = (W_paper x)ᵀ), which this script transposes back before using it. RoPE is written in its
complex form: the pair (a, b) becomes (a + i b) e^{i p theta_k}, theta_k = base^(-2k/r), with the
pairs (2k, 2k+1) (interleaved) or (k, k + r/2) (half-split).

Expected outputs: u (T x d) with the scale 1/sqrt(d_h + d_h^R), and u_e05 with the literal
scale 1/sqrt(d_h + d_h^2) printed in 004 (erratum E05).

Run: python3 tests/data/make_mla.py  (writes tests/data/mla.json)
"""
import json
import os
import random

import mpmath
from mpmath import mp, mpf

mp.dps = 50


def rand_matrix(rng, rows, cols, amp):
    return [[rng.uniform(-amp, amp) for _ in range(cols)] for _ in range(rows)]


def apply(w_row_layout, x):
    """W_paper x, with W_paper = transpose of the stored (in x out) matrix."""
    n_in, n_out = len(w_row_layout), len(w_row_layout[0])
    return [mpmath.fsum(mpf(w_row_layout[r][o]) * x[r] for r in range(n_in)) for o in range(n_out)]


def rope(x, p, base, layout):
    r = len(x)
    y = list(x)
    for k in range(r // 2):
        theta = mpf(base) ** (-mpf(2 * k) / r)
        a, b = (2 * k, 2 * k + 1) if layout == "interleaved" else (k, k + r // 2)
        z = mpmath.mpc(x[a], x[b]) * mpmath.expj(p * theta)
        y[a], y[b] = z.real, z.imag
    return y


def mla_naive(cfg, w, hs, scale):
    nh, dh, dr = cfg["heads"], cfg["head_dim"], cfg["rope_dim"]
    base, layout = cfg["rope_base"], cfg["rope_layout"]
    q, k, v = [], [], []
    for t, h_t in enumerate(hs):
        h_t = [mpf(x) for x in h_t]
        c_q = apply(w["w_dq"], h_t)  # (37)
        q_c = apply(w["w_uq"], c_q)  # (38)
        q_r_all = apply(w["w_qr"], c_q)
        q_r = [rope(q_r_all[i * dr:(i + 1) * dr], t, base, layout) for i in range(nh)]  # (39)
        q.append([q_c[i * dh:(i + 1) * dh] + q_r[i] for i in range(nh)])  # (40)
        c_kv = apply(w["w_dkv"], h_t)  # (41)
        k_c = apply(w["w_uk"], c_kv)  # (42)
        k_r = rope(apply(w["w_kr"], h_t), t, base, layout)  # (43)
        k.append([k_c[i * dh:(i + 1) * dh] + k_r for i in range(nh)])  # (44)
        v_c = apply(w["w_uv"], c_kv)  # (45)
        v.append([v_c[i * dh:(i + 1) * dh] for i in range(nh)])
    us = []
    for t in range(len(hs)):
        o = []
        for i in range(nh):  # (46): causal softmax over j <= t
            s = [mpmath.fsum(a * b for a, b in zip(q[t][i], k[j][i])) * scale for j in range(t + 1)]
            e = [mpmath.exp(x) for x in s]
            z = mpmath.fsum(e)
            o += [mpmath.fsum(e[j] / z * v[j][i][c] for j in range(t + 1)) for c in range(dh)]
        us.append(apply(w["w_o"], o))  # (47)
    return us


def make_case(name, seed, model_dim, heads, head_dim, rope_dim, kv_latent_dim, q_latent_dim,
              tokens, rope_layout, rope_base="10000"):
    rng = random.Random(seed)
    cfg = {
        "model_dim": model_dim,
        "heads": heads,
        "head_dim": head_dim,
        "rope_dim": rope_dim,
        "kv_latent_dim": kv_latent_dim,
        "q_latent_dim": q_latent_dim,
        "rope_base": rope_base,
        "rope_layout": rope_layout,
    }
    d, hd = model_dim, heads * head_dim
    shapes = {
        "w_dq": (d, q_latent_dim),
        "w_uq": (q_latent_dim, hd),
        "w_qr": (q_latent_dim, heads * rope_dim),
        "w_dkv": (d, kv_latent_dim),
        "w_uk": (kv_latent_dim, hd),
        "w_kr": (d, rope_dim),
        "w_uv": (kv_latent_dim, hd),
        "w_o": (hd, d),
    }
    # Entries of order 1/sqrt(fan_in) keep every intermediate of order 1.
    w = {n: rand_matrix(rng, r, c, 1.7 / r ** 0.5) for n, (r, c) in shapes.items()}
    hs = rand_matrix(rng, tokens, d, 1.0)
    u = mla_naive(cfg, w, hs, 1 / mpmath.sqrt(head_dim + rope_dim))
    u_e05 = mla_naive(cfg, w, hs, 1 / mpmath.sqrt(head_dim + head_dim ** 2))
    case = dict(cfg)
    case["name"] = name
    case["h"] = [[x.hex() for x in row] for row in hs]
    case["weights"] = {n: [[x.hex() for x in row] for row in m] for n, m in w.items()}
    case["u"] = [[mpmath.nstr(x, 50) for x in row] for row in u]
    case["u_e05"] = [[mpmath.nstr(x, 50) for x in row] for row in u_e05]
    return case


def main():
    cases = [
        make_case("interleaved", 11, model_dim=16, heads=2, head_dim=4, rope_dim=4,
                  kv_latent_dim=6, q_latent_dim=8, tokens=4, rope_layout="interleaved"),
        make_case("half_split", 12, model_dim=16, heads=2, head_dim=4, rope_dim=2,
                  kv_latent_dim=6, q_latent_dim=8, tokens=5, rope_layout="half_split",
                  rope_base="500000"),
    ]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mla.json")
    with open(path, "w") as f:
        json.dump({"generator": "make_mla.py", "dps": 50, "cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
