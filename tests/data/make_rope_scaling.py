#!/usr/bin/env python3
"""Known answers for F11 RoPE long-context scaling (reference/rope_scaling.h), mpmath 50 digits.

Writes rope_scaling.json beside this script: for each rule, the inverse frequencies h(θ_k) and
RoPE of a fixed vector at a few positions with them (complex form (x_a + i x_b)·e^{i p h_k}).
θ_k = base^(−2k/r). Parameters (stated in each case):
 - linear (position interpolation, Chen et al. 2023): r 128, base 1e4, s 4: h = θ / s.
 - ntk (NTK-aware, bloc97 2023): r 128, base 1e4, s 8: base' = base · s^(r/(r−2)).
 - yarn (the released code: HF "yarn", DeepSeek-V2/V3): r 64 (qk_rope_head_dim), base 1e4,
   s 40, original context 4096, beta_fast 32, beta_slow 1 — DeepSeek-V3's config; with
   truncate (floor/ceil of the correction dims, the default) and without.
 - yarn_paper (Peng et al. 2023 §3.2): same parameters, α = 1, β = 32, ramp linear in r = L/λ.
 - llama3 (Meta's apply_scaling): r 128, base 5e5, factor 8, low 1, high 4, original 8192.
 - mscale (YaRN temperature): 0.1 · m · ln s + 1 for s > 1, else 1.
"""
import json
import os
import random

from mpmath import mp, mpf, mpc, expj, nstr, pi, log, floor, ceil

mp.dps = 50


def s50(v):
    return nstr(v, 50)


def thetas(r, base):
    return [mpf(base) ** (-mpf(2 * k) / r) for k in range(r // 2)]


def linear(r, base, s):
    return [t / s for t in thetas(r, base)]


def ntk(r, base, s):
    b = mpf(base) * mpf(s) ** (mpf(r) / (r - 2))
    return thetas(r, b)


def yarn_code(r, base, s, L, beta_fast, beta_slow, truncate):
    def dim(turns):  # the k at which pair k turns `turns` times over L
        return r * log(mpf(L) / (2 * pi * turns)) / (2 * log(mpf(base)))
    lo, hi = dim(beta_fast), dim(beta_slow)
    if truncate:
        lo, hi = floor(lo), ceil(hi)
    lo, hi = max(lo, 0), min(hi, r - 1)
    if lo == hi:
        hi += mpf("0.001")
    out = []
    for k, t in enumerate(thetas(r, base)):
        ramp = min(max((k - lo) / (hi - lo), 0), 1)
        out.append(t / s * ramp + t * (1 - ramp))
    return out, [lo, hi]


def yarn_paper(r, base, s, L, alpha, beta):
    out = []
    for t in thetas(r, base):
        turns = mpf(L) * t / (2 * pi)  # L / λ, λ = 2π/θ
        gamma = 0 if turns < alpha else 1 if turns > beta else (turns - alpha) / (beta - alpha)
        out.append((1 - gamma) * t / s + gamma * t)
    return out


def llama3(r, base, factor, low, high, L):
    out, regimes = [], []
    for t in thetas(r, base):
        wavelength = 2 * pi / t
        if wavelength < mpf(L) / high:
            out.append(t)
            regimes.append("kept")
        elif wavelength > mpf(L) / low:
            out.append(t / factor)
            regimes.append("scaled")
        else:
            smooth = (mpf(L) / wavelength - low) / (high - low)
            out.append((1 - smooth) * t / factor + smooth * t)
            regimes.append("smooth")
    return out, regimes


def rope(x, p, freqs, layout):
    y = [mpf(v) for v in x]
    half = len(freqs)
    for k, f in enumerate(freqs):
        a, b = (2 * k, 2 * k + 1) if layout == "interleaved" else (k, k + half)
        z = mpc(x[a], x[b]) * expj(mpf(p) * f)
        y[a], y[b] = z.real, z.imag
    return y


def main():
    rng = random.Random(31337)
    cases = []

    def add(rule, params, r, base, freqs, positions, layout, extra=None):
        x = [rng.uniform(-1.0, 1.0) for _ in range(r)]
        case = {"rule": rule, "params": params, "rotary_dims": r, "base": float(base).hex(),
                "inv_freq": [s50(f) for f in freqs], "layout": layout,
                "positions": [float(p).hex() for p in positions], "x": [v.hex() for v in x],
                "y": [[s50(v) for v in rope(x, p, freqs, layout)] for p in positions]}
        if extra:
            case.update(extra)
        cases.append(case)

    add("linear", {"scale": 4}, 128, 10000, linear(128, 10000, 4), [1, 4095, 16383],
        "half_split")
    add("ntk", {"scale": 8}, 128, 10000, ntk(128, 10000, 8), [1, 32767], "half_split")
    for truncate in (True, False):
        freqs, lohi = yarn_code(64, 10000, 40, 4096, 32, 1, truncate)
        add("yarn", {"scale": 40, "original_context": 4096, "beta_fast": 32, "beta_slow": 1,
                     "truncate": truncate}, 64, 10000, freqs, [1, 4096, 163839], "interleaved",
            {"correction_range": [s50(v) for v in lohi]})
    add("yarn_paper", {"scale": 40, "original_context": 4096, "alpha": 1, "beta": 32}, 64,
        10000, yarn_paper(64, 10000, 40, 4096, 1, 32), [1, 4096, 163839], "interleaved")
    freqs, regimes = llama3(128, 500000, 8, 1, 4, 8192)
    add("llama3", {"factor": 8, "low_freq_factor": 1, "high_freq_factor": 4,
                   "original_context": 8192}, 128, 500000, freqs, [1, 8192, 131071],
        "half_split", {"regimes": regimes})

    mscale = []
    for s, m in [(40, "1"), (40, "0.707"), (4, "1"), (1, "1"), (0.5, "1")]:
        v = mpf("0.1") * mpf(m) * log(mpf(s)) + 1 if s > 1 else mpf(1)
        mscale.append({"scale": float(s).hex(), "mscale": m, "value": s50(v)})

    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rope_scaling.json")
    with open(out, "w") as f:
        json.dump({"generator": "make_rope_scaling.py", "dps": 50, "cases": cases,
                   "mscale": mscale}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
