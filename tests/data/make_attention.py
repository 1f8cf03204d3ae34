#!/usr/bin/env python3
"""Known answers for F15 attention (tests/reference/attention_test.cc), computed with mpmath at 50 digits.

Each case is one sequence: Q (T_q x h*d), K (T_k x g*d), V (T_k x g*d_v), row-major with the
heads side by side in a row. The expected output is computed from the definition

    O_head = softmax(cap(Q_head K_kvᵀ * scale) + M) V_kv,   kv = floor(head * g / h),

with M_ij = 0 where key j is visible to query i and -inf elsewhere, and the softmax taken
literally as exp(x_j) / sum_k exp(x_k) (mpmath's exp(-inf) = 0). Query i sits at position
T_k - T_q + i. Inputs are exact doubles written in hex; outputs are 50-digit decimal strings.

Run: python3 tests/data/make_attention.py  (writes tests/data/attention.json)
"""
import json
import os
import random

import mpmath
from mpmath import mp, mpf

mp.dps = 50


def rand_matrix(rng, rows, cols, amp):
    return [[rng.uniform(-amp, amp) for _ in range(cols)] for _ in range(rows)]


def visible(mask, p, j, window, docs):
    if mask == "none":
        return True
    if mask == "causal":
        return j <= p
    if mask == "sliding_window":
        return 0 <= p - j < window
    if mask == "document":
        return j <= p and docs[j] == docs[p]
    raise ValueError(mask)


def attention(case):
    h, g, d = case["heads"], case["kv_heads"], case["head_dim"]
    dv = case["value_dim"] or d
    q, k, v = case["q"], case["k"], case["v"]
    tq, tk = len(q), len(k)
    scale = mpf(case["scale"]) if case["scale"] else 1 / mpmath.sqrt(d)
    cap = mpf(case["soft_cap"]) if case["soft_cap"] else None
    out = [[None] * (h * dv) for _ in range(tq)]
    for head in range(h):
        kv = head * g // h
        for i in range(tq):
            p = tk - tq + i
            x = []
            for j in range(tk):
                s = mpmath.fsum(mpf(q[i][head * d + c]) * mpf(k[j][kv * d + c]) for c in range(d))
                s = s * scale
                if cap is not None:
                    s = cap * mpmath.tanh(s / cap)
                m = 0 if visible(case["mask"], p, j, case["window"], case["document_ids"]) else mpf("-inf")
                x.append(s + m)
            e = [mpmath.exp(xj) for xj in x]
            z = mpmath.fsum(e)
            for c in range(dv):
                out[i][head * dv + c] = mpmath.fsum(e[j] / z * mpf(v[j][kv * dv + c]) for j in range(tk))
    return out


def make_case(name, seed, heads, kv_heads, head_dim, t_q, t_k, mask="none", value_dim=0,
              window=0, document_ids=None, scale=None, soft_cap=None, amp=1.0):
    rng = random.Random(seed)
    dv = value_dim or head_dim
    case = {
        "name": name,
        "heads": heads,
        "kv_heads": kv_heads,
        "head_dim": head_dim,
        "value_dim": value_dim,
        "mask": mask,
        "window": window,
        "document_ids": document_ids or [],
        "scale": scale,
        "soft_cap": soft_cap,
        "q": rand_matrix(rng, t_q, heads * head_dim, amp),
        "k": rand_matrix(rng, t_k, kv_heads * head_dim, amp),
        "v": rand_matrix(rng, t_k, kv_heads * dv, 1.0),
    }
    out = attention(case)
    hexed = dict(case)
    for key in ("q", "k", "v"):
        hexed[key] = [[x.hex() for x in row] for row in case[key]]
    hexed["expected"] = [[mpmath.nstr(x, 50) for x in row] for row in out]
    return hexed


def main():
    cases = [
        make_case("mha", 1, heads=2, kv_heads=2, head_dim=4, t_q=5, t_k=5),
        make_case("gqa_causal", 2, heads=4, kv_heads=2, head_dim=4, t_q=6, t_k=6, mask="causal"),
        make_case("mqa_causal", 3, heads=3, kv_heads=1, head_dim=8, t_q=4, t_k=4, mask="causal"),
        # Chunked prefill / decoding: 3 queries at positions 4, 5, 6 of 7 keys.
        make_case("causal_offset", 4, heads=2, kv_heads=1, head_dim=4, t_q=3, t_k=7, mask="causal"),
        make_case("sliding_window", 5, heads=2, kv_heads=2, head_dim=4, t_q=8, t_k=8,
                  mask="sliding_window", window=3),
        make_case("document", 6, heads=2, kv_heads=1, head_dim=4, t_q=8, t_k=8, mask="document",
                  document_ids=[0, 0, 0, 1, 1, 2, 2, 2]),
        # Logits of a few units against cap 2, so the cap changes them substantially.
        make_case("soft_cap", 7, heads=2, kv_heads=2, head_dim=4, t_q=6, t_k=6, mask="causal",
                  soft_cap="2", amp=2.0),
        make_case("value_dim_and_scale", 8, heads=2, kv_heads=1, head_dim=4, t_q=5, t_k=5,
                  mask="causal", value_dim=3, scale="0.3"),
        make_case("gqa_window_cap", 9, heads=4, kv_heads=2, head_dim=2, t_q=7, t_k=7,
                  mask="sliding_window", window=2, soft_cap="1.5", amp=1.5),
    ]
    # F17's standalone online softmax: a row whose maximum rises late (so the running max is
    # rescaled several times for small tiles), with a spread wide enough that e^z spans ~1e13.
    rng = random.Random(10)
    row = [rng.uniform(-15.0, 15.0) for _ in range(11)]
    row[9] = 29.5
    z = mpmath.fsum(mpmath.exp(mpf(x)) for x in row)
    softmax_row = {
        "z": [x.hex() for x in row],
        "softmax": [mpmath.nstr(mpmath.exp(mpf(x)) / z, 50) for x in row],
        "logsumexp": mpmath.nstr(mpmath.log(z), 50),
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "attention.json")
    with open(path, "w") as f:
        json.dump({"generator": "make_attention.py", "dps": 50, "cases": cases,
                   "softmax_row": softmax_row}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
