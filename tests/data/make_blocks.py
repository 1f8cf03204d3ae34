#!/usr/bin/env python3
"""Known answers for F18 block layouts and the preset-driven decoder stack
(tests/reference/blocks_test.cc), computed with mpmath at 50 digits.

Each case is a model preset of presets.h reduced to tiny dimensions (3 tokens, d = 4; heads of
width 4 where RoPE rotates them, so that half-split and interleaved pairs differ), with random
weights, run through its layers from the definitions:

  post-LN (002):   x2 = x + Attn(x); x3 = LN(x2); x5 = x3 + FFN(x3); out = LN'(x5)
  pre-LN (002):    x3 = x + Attn(LN(x)); out = x3 + FFN(LN'(x3)); final LN after the last layer
  double norm:     x3 = x + Post(Attn(Pre(x))); out = x3 + Post'(FFN(Pre'(x3))); final norm
  OLMo 2:          x3 = x + Norm(Attn(x)); out = x3 + Norm'(FFN(x3)); final norm
  parallel (002):  y = x + MLP(LN(x)) + Attn(LN(x)); final norm

with
  LayerNorm  (x - mean) / sqrt(var + eps) * gamma + beta   (population variance; beta = 0 for
             the bias-free LayerNorm of PaLM and Cohere)
  RMSNorm    x / sqrt(mean(x^2) + eps) * gamma   (Gemma: * (1 + gamma))
  attention  softmax_j(cap(q_i . k_j * scale) + bias_ij + mask_ij) v_j per head, query head
             h reading KV head floor(h * g / H); scale 1/sqrt(d_head) (T5: 1); cap(s) =
             c * tanh(s / c); mask 0 where visible, -inf elsewhere (causal; sliding window
             0 <= i - j < w; document: same document and causal); q = x W_Q (+ b_Q), etc.;
             output O W_O (+ b_O)
  RoPE       on each head of q and k, angle p * theta_k, theta_k = base^(-2k/d_head), pairs
             (k, k + d/2) (half-split) or (2k, 2k + 1) (interleaved); Llama 3.1 frequency
             scaling from Meta's apply_scaling
  MLA, MoE   DeepSeek-V2 eqs. 37-47 (see mla()) and F20 routing (see moe())
  T5 bias    table[bucket(p_j - p_i)][head], causal buckets (n = max(p_i - p_j, 0); exact below
             num_buckets / 2, logarithmic above)
  FFN        act(x W1 + b1) W2 + b2, act(x W1) W2, or GLU (act(x W) * x V) W2, act one of ReLU,
             GELU-tanh 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), SiLU x / (1 + e^-x)

The stack takes already-embedded inputs x (the sinusoidal / learned encodings of M01, M02 are
added before it), so x is random here. Inputs and weights are exact doubles written in hex, named
as decoder_weights.h names them; outputs are 50-digit decimal strings.

Run: python3 tests/data/make_blocks.py  (writes tests/data/blocks.json)
"""
import json
import os
import random

import mpmath
from mpmath import mp, mpf

mp.dps = 50


# ---------------------------------------------------------------- linear algebra, in mpmath

def matmul(a, b):
    return [[mpmath.fsum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))]
            for i in range(len(a))]


def add_bias(a, b):
    return [[a[i][j] + b[j] for j in range(len(a[0]))] for i in range(len(a))]


def add(a, b):
    return [[a[i][j] + b[i][j] for j in range(len(a[0]))] for i in range(len(a))]


# ---------------------------------------------------------------- norms, activations, FFN

def norm_row(kind, x, w, eps):
    d = len(x)
    if kind in ("layernorm", "layernorm_nobias"):
        mu = mpmath.fsum(x) / d
        var = mpmath.fsum((v - mu) ** 2 for v in x) / d
        beta = w["beta"] if kind == "layernorm" else [0] * d
        return [(x[i] - mu) / mpmath.sqrt(var + eps) * w["gamma"][i] + beta[i] for i in range(d)]
    ms = mpmath.fsum(v * v for v in x) / d
    scale = [1 + g for g in w["gamma"]] if kind == "rmsnorm_gemma" else w["gamma"]
    return [x[i] / mpmath.sqrt(ms + eps) * scale[i] for i in range(d)]


def norm(cfg, x, w):
    return [norm_row(cfg["norm"], row, w, cfg["eps"]) for row in x]


def act(kind, x):
    if kind == "relu":
        return max(mpf(0), x)
    if kind == "gelu_tanh":
        u = mpmath.sqrt(2 / mpmath.pi) * (x + mpf("0.044715") * x ** 3)
        return x / 2 * (1 + mpmath.tanh(u))
    if kind == "silu":
        return x / (1 + mpmath.exp(-x))
    raise ValueError(kind)


def ffn(cfg, x, w):
    a = cfg["activation"]
    if cfg["gated"]:
        g = matmul(x, w["w1"])
        v = matmul(x, w["v"])
        h = [[act(a, g[i][j]) * v[i][j] for j in range(len(g[0]))] for i in range(len(g))]
        return matmul(h, w["w2"])
    pre = matmul(x, w["w1"])
    if cfg["biases"]:
        pre = add_bias(pre, w["b1"])
    h = [[act(a, v) for v in row] for row in pre]
    out = matmul(h, w["w2"])
    return add_bias(out, w["b2"]) if cfg["biases"] else out


# ---------------------------------------------------------------- positions

def inv_freqs(cfg, d=None):
    d = d or cfg["d_head"]
    base = mpf(cfg["rope_base"])
    theta = [base ** (-mpf(2 * k) / d) for k in range(d // 2)]
    y = cfg.get("yarn")
    if y is not None:
        # The released YaRN rule (jquesnelle/yarn, DeepSeek's yarn_find_correction_range and
        # yarn_linear_ramp_mask): the turn thresholds become dimension indices, the ramp is
        # linear in the index.
        factor, length = mpf(y["factor"]), mpf(y["orig"])

        def dim(turns):
            return d * mpmath.log(length / (turns * 2 * mpmath.pi)) / (2 * mpmath.log(base))

        lo = max(mpmath.floor(dim(mpf(y["beta_fast"]))), 0)
        hi = min(mpmath.ceil(dim(mpf(y["beta_slow"]))), d - 1)
        if lo == hi:
            hi += mpf("0.001")
        out = []
        for k, t in enumerate(theta):
            ramp = min(max((k - lo) / (hi - lo), 0), 1)
            out.append(t / factor * ramp + t * (1 - ramp))
        return out
    s = cfg.get("llama3")
    if s is None:
        return theta
    factor, low, high, length = mpf(s["factor"]), mpf(s["low"]), mpf(s["high"]), mpf(s["orig"])
    out = []
    for t in theta:
        wavelen = 2 * mpmath.pi / t
        if wavelen < length / high:
            out.append(t)
        elif wavelen > length / low:
            out.append(t / factor)
        else:
            smooth = (length / wavelen - low) / (high - low)
            out.append((1 - smooth) * t / factor + smooth * t)
    return out


def rope_head(v, p, theta, layout):
    d = len(v)
    out = list(v)
    for k, t in enumerate(theta):
        a, b = (2 * k, 2 * k + 1) if layout == "interleaved" else (k, k + d // 2)
        c, s = mpmath.cos(p * t), mpmath.sin(p * t)
        out[a] = v[a] * c - v[b] * s
        out[b] = v[a] * s + v[b] * c
    return out


def rope_rows(x, heads, d, positions, theta, layout):
    return [sum((rope_head(row[h * d:(h + 1) * d], positions[t], theta, layout)
                 for h in range(heads)), []) for t, row in enumerate(x)]


def t5_bucket(rel, buckets, max_distance):
    n = max(-rel, 0)
    exact = buckets // 2
    if n < exact:
        return n
    b = exact + int(mpmath.floor(mpmath.log(mpf(n) / exact) / mpmath.log(mpf(max_distance) / exact)
                                 * (buckets - exact)))
    return min(b, buckets - 1)


# ---------------------------------------------------------------- attention

def visible(kind, i, j, window, docs):
    if j > i:
        return False
    if kind in ("sliding", "banded"):
        return i - j < window
    if docs:
        return docs[i] == docs[j]
    return True


def attention(cfg, layer, x, w, positions, docs, table):
    H, G, d = cfg["n_heads"], cfg["n_kv_heads"], cfg["d_head"]
    kind = cfg["pattern"][layer % len(cfg["pattern"])]
    q, k, v = matmul(x, w["w_q"]), matmul(x, w["w_k"]), matmul(x, w["w_v"])
    if cfg["biases"]:
        q, k, v = add_bias(q, w["b_q"]), add_bias(k, w["b_k"]), add_bias(v, w["b_v"])
    if cfg["position"] == "rope" and kind != "global_nopos":
        theta = inv_freqs(cfg)
        q = rope_rows(q, H, d, positions, theta, cfg["rope_layout"])
        k = rope_rows(k, G, d, positions, theta, cfg["rope_layout"])
    scale = mpf(1) if cfg["position"] == "t5" else 1 / mpmath.sqrt(d)
    cap = mpf(cfg["softcap"]) if cfg["softcap"] else None
    n = len(x)
    o = [[None] * (H * d) for _ in range(n)]
    for h in range(H):
        g = h * G // H
        for i in range(n):
            logits = []
            for j in range(n):
                s = mpmath.fsum(q[i][h * d + c] * k[j][g * d + c] for c in range(d)) * scale
                if cap is not None:
                    s = cap * mpmath.tanh(s / cap)
                if cfg["position"] == "t5":
                    s += table[t5_bucket(positions[j] - positions[i], cfg["buckets"],
                                         cfg["max_distance"])][h]
                vis = visible(kind, i, j, cfg["window"], docs)
                logits.append(s if vis else mpf("-inf"))
            e = [mpmath.exp(s) for s in logits]
            z = mpmath.fsum(e)
            for c in range(d):
                o[i][h * d + c] = mpmath.fsum(e[j] / z * v[j][g * d + c] for j in range(n))
    out = matmul(o, w["w_o"])
    return add_bias(out, w["b_o"]) if cfg["biases"] else out


# ---------------------------------------------------------------- MLA (F19) and MoE (F20)

def mla(cfg, x, w):
    """DeepSeek-V2 eqs. 37-47, row vectors: per head i, [q_C; q_R] . [k_C; k_R] / sqrt(d_h + d_R),
    k_R shared by the heads, RoPE (interleaved pairs, YaRN frequencies) at position t; the scale
    times YaRN's temperature m^2 where the case names mscale_all_dim."""
    H, dh, dr = cfg["n_heads"], cfg["mla"]["d_h"], cfg["mla"]["d_rope"]
    theta = inv_freqs(cfg, dr)
    n = len(x)
    pos = list(range(n))
    c_q = matmul(x, w["w_dq"])
    q_c = matmul(c_q, w["w_uq"])
    q_r = rope_rows(matmul(c_q, w["w_qr"]), H, dr, pos, theta, "interleaved")
    c_kv = matmul(x, w["w_dkv"])
    k_c = matmul(c_kv, w["w_uk"])
    k_r = rope_rows(matmul(x, w["w_kr"]), 1, dr, pos, theta, "interleaved")
    v = matmul(c_kv, w["w_uv"])
    scale = 1 / mpmath.sqrt(dh + dr)
    y = cfg.get("yarn")
    if y is not None and "mscale_all_dim" in y:
        # YaRN's temperature on the softmax scale (DeepSeek's code: softmax_scale * mscale *
        # mscale, mscale = 0.1 * mscale_all_dim * ln(factor) + 1).
        m = mpf("0.1") * mpf(y["mscale_all_dim"]) * mpmath.log(mpf(y["factor"])) + 1
        scale *= m * m
    o = [[None] * (H * dh) for _ in range(n)]
    for h in range(H):
        for t in range(n):
            e = []
            for j in range(t + 1):
                s = mpmath.fsum(q_c[t][h * dh + c] * k_c[j][h * dh + c] for c in range(dh))
                s += mpmath.fsum(q_r[t][h * dr + c] * k_r[j][c] for c in range(dr))
                e.append(mpmath.exp(s * scale))
            z = mpmath.fsum(e)
            for c in range(dh):
                o[t][h * dh + c] = mpmath.fsum(e[j] / z * v[j][h * dh + c] for j in range(t + 1))
    return matmul(o, w["w_o"])


def moe(cfg, x, w):
    """F20 without the residual: sum of the shared experts plus sum over the selected routed
    experts of g_i * FFN_i(u). Selection on s_i + c_i (c the balance bias, V3), limited to the
    topk_group groups of highest group score (V3: sum of the two largest s_i + c_i of the group;
    V2: the largest); gates from the unbiased s_i, normalized over the selected experts (V3) or
    not (V2), times the routed scale."""
    m = cfg["moe"]
    N, G = m["n_routed"], m["n_group"]
    size = N // G
    logits = matmul(x, w["router"])
    out = []
    for t, u in enumerate(x):
        z = logits[t]
        if m["score"] == "sigmoid":
            s = [1 / (1 + mpmath.exp(-v)) for v in z]
        else:
            ez = [mpmath.exp(v) for v in z]
            s = [v / mpmath.fsum(ez) for v in ez]
        sel = [s[i] + (w["balance_bias"][i] if m["balance_bias"] else 0) for i in range(N)]
        gscore = []
        for g in range(G):
            top = sorted(sel[g * size:(g + 1) * size], reverse=True)
            gscore.append(top[0] + top[1] if m["group_score"] == "top2" else top[0])
        ranked_groups = sorted(range(G), key=lambda g: -gscore[g])
        groups = ranked_groups[:m["topk_group"]]
        eligible = [i for g in groups for i in range(g * size, (g + 1) * size)]
        ranked = sorted(eligible, key=lambda i: -sel[i])
        chosen = ranked[:m["top_k"]]
        # The choices must not be near-ties, or a double run could legitimately choose otherwise.
        k, kg = m["top_k"], m["topk_group"]
        assert sel[ranked[k - 1]] - sel[ranked[k]] > mpf("1e-6")
        assert kg == G or gscore[ranked_groups[kg - 1]] - gscore[ranked_groups[kg]] > mpf("1e-6")
        denom = mpmath.fsum(s[i] for i in chosen) if m["normalize"] else 1
        total = [mpf(0)] * len(u)
        for e in range(m["n_shared"]):
            y = ffn(cfg, [u], w["shared"][e])[0]
            total = [a + b for a, b in zip(total, y)]
        for i in chosen:
            g = s[i] / denom * mpf(m["routed_scale"])
            y = ffn(cfg, [u], w["routed"][i])[0]
            total = [a + g * b for a, b in zip(total, y)]
        out.append(total)
    return out


# ---------------------------------------------------------------- layouts and the stack

def layer(cfg, l, x, W, positions, docs):
    p = "layers.%d." % l
    attn_w = {k[len(p) + 5:]: v for k, v in W.items() if k.startswith(p + "attn.")}
    ffn_w = {k[len(p) + 4:]: v for k, v in W.items() if k.startswith(p + "ffn.")}

    def nw(slot):
        return {k[len(p + slot) + 1:]: v for k, v in W.items() if k.startswith(p + slot + ".")}

    def sub(prefix):
        return {k[len(prefix):]: v for k, v in W.items() if k.startswith(prefix)}

    def A(u):
        if cfg.get("mla"):
            return mla(cfg, u, sub(p + "mla."))
        return attention(cfg, l, u, attn_w, positions, docs, W.get("relative_bias"))

    def F(u):
        if cfg.get("moe") and l >= cfg["moe"]["dense_layers"]:
            mw = sub(p + "moe.")
            m = cfg["moe"]
            experts = {
                kind: [{k: mw["%s.%d.%s" % (kind, e, k)] for k in ("w1", "v", "w2")}
                       for e in range(m["n_" + kind])] for kind in ("shared", "routed")}
            return moe(cfg, u, dict(router=mw["router"], balance_bias=mw.get("balance_bias"),
                                    **experts))
        return ffn(cfg, u, ffn_w)

    def N(slot, u):
        return norm(cfg, u, nw(slot))

    if cfg["parallel"]:
        n = N("attn_norm", x)
        return add(add(x, F(n)), A(n))
    layout = cfg["layout"]
    if layout == "post":
        x3 = N("attn_norm", add(x, A(x)))
        return N("ffn_norm", add(x3, F(x3)))
    if layout == "pre":
        x3 = add(x, A(N("attn_norm", x)))
        return add(x3, F(N("ffn_norm", x3)))
    if layout == "double":
        x3 = add(x, N("attn_post_norm", A(N("attn_norm", x))))
        return add(x3, N("ffn_post_norm", F(N("ffn_norm", x3))))
    if layout == "output":
        x3 = add(x, N("attn_post_norm", A(x)))
        return add(x3, N("ffn_post_norm", F(x3)))
    raise ValueError(layout)


def stack(cfg, x, W, positions, docs):
    for l in range(cfg["n_layers"]):
        x = layer(cfg, l, x, W, positions, docs)
    if cfg["layout"] != "post":
        x = norm(cfg, x, {"gamma": W["final_norm.gamma"], "beta": W.get("final_norm.beta")})
    return x


# ---------------------------------------------------------------- weights and cases

def weight_shapes(cfg):
    d, H, G, dh, f = cfg["d_model"], cfg["n_heads"], cfg["n_kv_heads"], cfg["d_head"], cfg["d_ff"]
    if cfg["parallel"]:
        slots = ["attn_norm"]
    else:
        slots = {"post": ["attn_norm", "ffn_norm"], "pre": ["attn_norm", "ffn_norm"],
                 "double": ["attn_norm", "attn_post_norm", "ffn_norm", "ffn_post_norm"],
                 "output": ["attn_post_norm", "ffn_post_norm"]}[cfg["layout"]]
    shapes = {}

    def add_norm(name):
        shapes[name + ".gamma"] = (1, d)
        if cfg["norm"] == "layernorm":
            shapes[name + ".beta"] = (1, d)

    for l in range(cfg["n_layers"]):
        p = "layers.%d." % l
        for s in slots:
            add_norm(p + s)
        if cfg.get("mla"):
            m = cfg["mla"]
            for n, r, c in (("w_dq", d, m["d_c_q"]), ("w_uq", m["d_c_q"], H * m["d_h"]),
                            ("w_qr", m["d_c_q"], H * m["d_rope"]), ("w_dkv", d, m["d_c"]),
                            ("w_uk", m["d_c"], H * m["d_h"]), ("w_kr", d, m["d_rope"]),
                            ("w_uv", m["d_c"], H * m["d_h"]), ("w_o", H * m["d_h"], d)):
                shapes[p + "mla." + n] = (r, c)
        else:
            shapes[p + "attn.w_q"] = (d, H * dh)
            shapes[p + "attn.w_k"] = (d, G * dh)
            shapes[p + "attn.w_v"] = (d, G * dh)
            shapes[p + "attn.w_o"] = (H * dh, d)
        if cfg["biases"]:
            for n, c in (("b_q", H * dh), ("b_k", G * dh), ("b_v", G * dh), ("b_o", d)):
                shapes[p + "attn." + n] = (1, c)
        if cfg.get("moe") and l >= cfg["moe"]["dense_layers"]:
            m = cfg["moe"]
            fe = m["d_ff_expert"]
            shapes[p + "moe.router"] = (d, m["n_routed"])
            if m["balance_bias"]:
                shapes[p + "moe.balance_bias"] = (1, m["n_routed"])
            for kind in ("shared", "routed"):
                for e in range(m["n_" + kind]):
                    q = "%smoe.%s.%d." % (p, kind, e)
                    shapes[q + "w1"], shapes[q + "v"], shapes[q + "w2"] = (d, fe), (d, fe), (fe, d)
            continue
        shapes[p + "ffn.w1"] = (d, f)
        if cfg["gated"]:
            shapes[p + "ffn.v"] = (d, f)
        shapes[p + "ffn.w2"] = (f, d)
        if cfg["biases"]:
            shapes[p + "ffn.b1"] = (1, f)
            shapes[p + "ffn.b2"] = (1, d)
    if cfg["layout"] != "post":
        add_norm("final_norm")
    if cfg["position"] == "t5":
        shapes["relative_bias"] = (cfg["buckets"], H)
    return shapes


def make_case(name, preset, cfg, reduction, seed, positions, docs=None):
    rng = random.Random(seed)
    d = cfg["d_model"]
    n = len(positions)
    x = [[rng.uniform(-1, 1) for _ in range(d)] for _ in range(n)]
    weights = {}
    for wname, (r, c) in sorted(weight_shapes(cfg).items()):
        if wname.endswith(".gamma"):
            # Gemma stores gamma with the weight 1 + gamma: keep both near the usual scale.
            center = 0.0 if cfg["norm"] == "rmsnorm_gemma" else 1.0
            vals = [center + rng.uniform(-0.25, 0.25) for _ in range(r * c)]
        elif wname == "relative_bias" or wname[wname.rfind("."):].startswith(".b"):
            vals = [rng.uniform(-0.5, 0.5) for _ in range(r * c)]
        else:
            vals = [rng.uniform(-1, 1) / r ** 0.5 for _ in range(r * c)]
        weights[wname] = vals
    W = {}
    for wname, vals in weights.items():
        r, c = weight_shapes(cfg)[wname]
        m = [[mpf(vals[i * c + j]) for j in range(c)] for i in range(r)]
        W[wname] = m[0] if r == 1 and wname != "relative_bias" else m
    cfg = dict(cfg)
    cfg["eps"] = mpf(cfg["eps"])
    out = stack(cfg, [[mpf(v) for v in row] for row in x], W, positions, docs or [])
    return {
        "name": name,
        "preset": preset,
        "reduction": reduction,
        "positions": positions,
        "document_ids": docs or [],
        "x": [[v.hex() for v in row] for row in x],
        "weights": {k: [v.hex() for v in vals] for k, vals in weights.items()},
        "expected": [[mpmath.nstr(v, 50) for v in row] for row in out],
    }


def config(**kw):
    base = dict(d_model=4, n_heads=2, n_kv_heads=2, d_head=2, d_ff=6, n_layers=2, biases=False,
                gated=False, parallel=False, layout="pre", position="none", softcap=None,
                pattern=["global"], window=0, rope_layout="half", rope_base=None)
    base.update(kw)
    return base


def reduction(cfg, **fills):
    r = {k: cfg[k] for k in ("d_model", "n_heads", "n_kv_heads", "d_head", "d_ff", "n_layers")}
    r["window"] = cfg["window"] or None
    r["norm_eps"] = fills.get("norm_eps")
    r["rope_base"] = fills.get("rope_base")
    r["mla"] = cfg.get("mla")
    r["moe"] = {k: cfg["moe"][k] for k in ("n_routed", "n_shared", "top_k", "d_ff_expert",
                                          "n_group", "topk_group", "dense_layers")} \
        if cfg.get("moe") else None
    return r


def main():
    cases = []
    # M01, post-LN: LayerNorm with beta, ReLU FFN with biases, attention with biases; eps is not
    # in the paper (filled in as 1e-5).
    c = config(norm="layernorm", eps="1e-5", activation="relu", biases=True, layout="post")
    cases.append(make_case("post_ln_m01", "transformer-base", c, reduction(c, norm_eps="1e-5"),
                           101, [0, 1, 2]))
    # M02, pre-LN + final LN: GELU-tanh FFN with biases.
    c = config(norm="layernorm", eps="1e-5", activation="gelu_tanh", biases=True)
    cases.append(make_case("pre_ln_m02", "gpt2-small", c, reduction(c), 102, [0, 1, 2]))
    # M07, double norm: Gemma (1 + gamma) RMSNorm, GeGLU-tanh, GQA, RoPE half-split, attention
    # soft-cap 50, layer 0 sliding window (2), layer 1 global.
    c = config(n_heads=4, n_kv_heads=2, d_head=4, norm="rmsnorm_gemma", eps="1e-6",
               activation="gelu_tanh", gated=True, layout="double", position="rope",
               rope_base="10000", softcap="50", pattern=["sliding", "global"], window=2)
    cases.append(make_case("double_norm_m07", "gemma2-9b", c, reduction(c), 107, [0, 1, 2]))
    # M11, OLMo 2: RMSNorm on the sublayer outputs only, SwiGLU, RoPE base 500000; positions
    # offset by 5 (a later chunk of a sequence).
    c = config(d_head=4, norm="rmsnorm", eps="1e-6", activation="silu", gated=True,
               layout="output", position="rope", rope_base="500000")
    cases.append(make_case("olmo2_m11", "olmo2-7b", c, reduction(c), 111, [5, 6, 7]))
    # M08, parallel: one shared bias-free LayerNorm, SwiGLU, MQA, RoPE half-split; eps and base are
    # not published (filled in as 1e-5 and 10000).
    c = config(n_kv_heads=1, d_head=4, norm="layernorm_nobias", eps="1e-5", activation="silu",
               gated=True, parallel=True, position="rope", rope_base="10000")
    cases.append(make_case("parallel_m08", "palm-540b", c,
                           reduction(c, norm_eps="1e-5", rope_base="10000"), 108, [0, 1, 2]))
    # M10, parallel with 3 sliding-window RoPE layers (interleaved pairs) and 1 global layer
    # without positions; GQA.
    c = config(n_heads=4, n_kv_heads=2, d_head=4, n_layers=4, norm="layernorm_nobias", eps="1e-5",
               activation="silu", gated=True, parallel=True, position="rope", rope_base="50000",
               rope_layout="interleaved", pattern=["sliding", "sliding", "sliding", "global_nopos"],
               window=2)
    cases.append(make_case("parallel_m10", "cohere2-r7b", c, reduction(c), 110, [0, 1, 2]))
    # M12, T5: RMSNorm, ReLU FFN without biases, relative position bias (32 causal buckets,
    # max distance 128) shared by the layers, logits not scaled.
    c = config(norm="rmsnorm", eps="1e-6", activation="relu", position="t5", buckets=32,
               max_distance=128)
    cases.append(make_case("t5_m12", "t5-11b", c, reduction(c), 112, [0, 1, 2]))
    # M05 Llama 3.1: pre-norm RMSNorm, SwiGLU, GQA, RoPE base 500000 with the Llama 3.1 frequency
    # scaling (d_head 4: theta_1 falls in the smoothed band), document mask.
    c = config(n_heads=4, n_kv_heads=2, d_head=4, norm="rmsnorm", eps="1e-5", activation="silu",
               gated=True, position="rope", rope_base="500000",
               llama3=dict(factor="8", low="1", high="4", orig=8192))
    cases.append(make_case("llama31_m05", "llama3.1-405b", c, reduction(c), 105, [0, 1, 2],
                           docs=[0, 0, 1]))

    # M09 DeepSeek-V3: MLA (d_c 4, d_c' 6, d_h 2, d_h^R 4; YaRN factor 40 over 4096 on the
    # rotary dimensions, interleaved pairs), RMSNorm, a dense SwiGLU first layer, then a MoE
    # layer: 8 routed experts in 2 groups, 1 group kept, top-2, sigmoid affinities with the
    # balance bias in the selection, gates normalized over the selected and scaled by 2.5, one
    # shared expert; 4 tokens.
    mla_dims = dict(d_c=4, d_c_q=6, d_h=2, d_rope=4, d_v=2)
    yarn = dict(factor="40", orig=4096, beta_fast="32", beta_slow="1", mscale_all_dim="1")
    c = config(norm="rmsnorm", eps="1e-6", activation="silu", gated=True, position="rope",
               rope_base="10000", yarn=yarn, mla=mla_dims,
               moe=dict(n_routed=8, n_shared=1, top_k=2, d_ff_expert=3, n_group=2, topk_group=1,
                        dense_layers=1, score="sigmoid", group_score="top2", normalize=True,
                        routed_scale="2.5", balance_bias=True))
    cases.append(make_case("deepseek_v3_m09", "deepseek-v3", c, reduction(c), 109, [0, 1, 2, 3]))
    # M09 DeepSeek-V2: softmax affinities, group score the largest, 4 groups of 2 with 2 kept,
    # gates not normalized, scaled by 16, two shared experts, no balance bias; YaRN's temperature
    # with mscale_all_dim 0.707 (V2's config.json) where V3 has 1.
    yarn = dict(yarn, mscale_all_dim="0.707")
    c = config(norm="rmsnorm", eps="1e-6", activation="silu", gated=True, position="rope",
               rope_base="10000", yarn=yarn, mla=mla_dims,
               moe=dict(n_routed=8, n_shared=2, top_k=2, d_ff_expert=3, n_group=4, topk_group=2,
                        dense_layers=1, score="softmax", group_score="max", normalize=False,
                        routed_scale="16", balance_bias=False))
    cases.append(make_case("deepseek_v2_m09", "deepseek-v2", c, reduction(c), 209, [0, 1, 2, 3]))

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "blocks.json")
    with open(path, "w") as f:
        json.dump({"generator": "make_blocks.py", "dps": 50, "cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
