#!/usr/bin/env python3
"""Known answers for F20-F22 (MoE routing, load-balance loss, aux-loss-free bias), mpmath at 50
digits. Writes moe.json beside this script.

Written from the definitions in FORMULAS.md / seeds/004, not from the C++:
  s_i = sigmoid(z_i) = 1/(1+exp(-z_i))  or  softmax(z)_i,
  selection = the K largest of s_i + c_i (after group limiting), gates g_i = s_i / sum_sel s_j
  (times the routed scale), L = alpha sum_i f_i P_i.
Inputs are exact doubles written with float.hex(). Each case checks that its discrete answers
(selected groups and experts) are separated from the runners-up by a clear margin, so the C++
side at 50 digits cannot legitimately choose differently.
"""
import json
import os

import mpmath

from mpmath import mp, mpf, exp

mp.dps = 50
MARGIN = mpf("1e-6")


def s50(x):
    return mp.nstr(mpf(x), 50)


def hexes(xs):
    return [float(x).hex() for x in xs]


class Lcg:
    """A fixed 64-bit LCG: deterministic doubles, no dependence on Python's random module."""

    def __init__(self, seed):
        self.state = seed

    def next_unit(self):
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % 2**64
        return (self.state >> 11) / 2.0**53

    def uniform(self, lo, hi, quantum=2.0**-20):
        # Rounded to a multiple of quantum, so values are short exact doubles.
        x = lo + (hi - lo) * self.next_unit()
        return round(x / quantum) * quantum


def sigmoid(z):
    return 1 / (1 + exp(-mpf(z)))


def softmax(zs):
    es = [exp(mpf(z)) for z in zs]
    total = sum(es)
    return [e / total for e in es]


def top(values, candidates, k):
    """The k best candidates: larger value first, lower index on ties. Checks the margin."""
    order = sorted(candidates, key=lambda i: (-values[i], i))
    if k < len(order):
        assert values[order[k - 1]] - values[order[k]] > MARGIN, "near tie in test data"
    return order[:k]


def route(logits, bias, k, score="sigmoid", n_group=1, topk_group=1, group="top2", normalize=True,
          scale=1):
    n = len(logits)
    s = [sigmoid(z) for z in logits] if score == "sigmoid" else softmax(logits)
    sel = [s[i] + (mpf(bias[i]) if bias else 0) for i in range(n)]
    groups = None
    eligible = list(range(n))
    if n_group > 1:
        m = n // n_group
        gscores = []
        for g in range(n_group):
            vals = sorted((sel[i] for i in range(g * m, (g + 1) * m)), reverse=True)
            gscores.append(vals[0] + vals[1] if group == "top2" else vals[0])
        groups = sorted(top(gscores, list(range(n_group)), topk_group))
        eligible = [i for g in groups for i in range(g * m, (g + 1) * m)]
    experts = sorted(top(sel, eligible, k))
    denom = sum(s[i] for i in experts) if normalize else 1
    gates = [s[i] / denom * mpf(scale) for i in experts]
    return {"s": s, "groups": groups, "experts": experts, "gates": gates}


def case_bias_flip():
    # Unbiased top-3 is {0, 1, 2}; the bias lifts expert 5 above expert 2 (and lowers expert 0,
    # which stays selected). The gates must still come from the unbiased s_i.
    logits = [1.25, 0.75, 0.5, -0.25, 0.125, -1.0, 0.375, -0.5]
    bias = [-0.1, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0]
    plain = route(logits, None, 3)
    biased = route(logits, bias, 3)
    scaled = route(logits, bias, 3, scale=2.5)
    assert plain["experts"] == [0, 1, 2] and biased["experts"] == [0, 1, 5]
    # What the gates would be if (wrongly) computed from the biased scores.
    sel = [plain["s"][i] + mpf(bias[i]) for i in range(8)]
    wrong = [sel[i] / sum(sel[j] for j in [0, 1, 5]) for i in [0, 1, 5]]
    return {
        "logits": hexes(logits), "bias": hexes(bias), "top_k": 3,
        "affinities": [s50(x) for x in plain["s"]],
        "unbiased_experts": plain["experts"], "unbiased_gates": [s50(x) for x in plain["gates"]],
        "experts": biased["experts"], "gates": [s50(x) for x in biased["gates"]],
        "gates_scaled_2_5": [s50(x) for x in scaled["gates"]],
        "gates_from_biased_scores": [s50(x) for x in wrong],
    }


def case_v3_groups():
    # DeepSeek-V3 shape: 256 experts, 8 groups of 32, keep 4 groups, top-8, scale 2.5.
    rng = Lcg(20240101)
    n, tokens = 256, 4
    bias = [rng.uniform(-0.05, 0.05) for _ in range(n)]
    out = {"n": n, "n_group": 8, "topk_group": 4, "top_k": 8, "routed_scale": 2.5,
           "bias": hexes(bias), "tokens": []}
    group_limit_matters = False
    for _ in range(tokens):
        logits = [rng.uniform(-3.0, 3.0) for _ in range(n)]
        r = route(logits, bias, 8, n_group=8, topk_group=4, scale=2.5)
        free = route(logits, bias, 8, scale=2.5)
        group_limit_matters |= free["experts"] != r["experts"]
        assert abs(sum(r["gates"]) - mpf("2.5")) < mpf("1e-45")
        out["tokens"].append({
            "logits": hexes(logits), "groups": r["groups"], "experts": r["experts"],
            "gates": [s50(x) for x in r["gates"]], "ungrouped_experts": free["experts"],
        })
    assert group_limit_matters
    return out


def case_softmax():
    logits = [0.5, -1.25, 2.0, 0.75, -0.5, 1.5]
    probs = route(logits, None, 2, score="softmax", normalize=False)
    renorm = route(logits, None, 2, score="softmax", normalize=True)
    # DeepSeek-V2 style: softmax, 4 groups of 2 scored by their max, keep 2, top-3, scale 16.
    logits8 = [0.25, 1.75, -0.5, 0.0, 1.5, 1.0, -1.0, 0.5]
    v2 = route(logits8, None, 3, score="softmax", n_group=4, topk_group=2, group="max",
               normalize=False, scale=16)
    return {
        "logits": hexes(logits), "top_k": 2,
        "probabilities": [s50(x) for x in probs["s"]], "experts": probs["experts"],
        "gates": [s50(x) for x in probs["gates"]],
        "gates_renormalized": [s50(x) for x in renorm["gates"]],
        "v2": {"logits": hexes(logits8), "n_group": 4, "topk_group": 2, "top_k": 3,
               "routed_scale": 16.0, "groups": v2["groups"], "experts": v2["experts"],
               "gates": [s50(x) for x in v2["gates"]]},
    }


def case_balance():
    rng = Lcg(77)
    tokens, n, k = 5, 6, 2
    alpha = 0.001
    logits = [[rng.uniform(-2.0, 2.0) for _ in range(n)] for _ in range(tokens)]
    routes = [route(row, None, k) for row in logits]
    count = [sum(i in r["experts"] for r in routes) for i in range(n)]
    f = [mpf(n) / (k * tokens) * c for c in count]
    p = []
    for i in range(n):
        acc = mpf(0)
        for r in routes:
            acc += r["s"][i] / sum(r["s"])
        p.append(acc / tokens)
    loss = mpf(alpha) * sum(fi * pi for fi, pi in zip(f, p))
    return {"logits": [hexes(row) for row in logits], "top_k": k, "alpha": float(alpha).hex(),
            "experts": [r["experts"] for r in routes], "f": [s50(x) for x in f],
            "p": [s50(x) for x in p], "loss": s50(loss)}


def case_bias_update():
    # Experts 0-3 have close affinities, so the +-gamma steps move the choice around.
    rng = Lcg(4242)
    n, k, tokens, steps = 8, 2, 6, 6
    gamma = 0.001
    base = [0.30, 0.296, 0.293, 0.291, -1.0, -1.25, -1.5, -2.0]
    logits = [[b + rng.uniform(-0.0005, 0.0005) for b in base] for _ in range(tokens)]
    bias = [mpf(0)] * n
    history = []
    changed = False
    previous = None
    for _ in range(steps):
        routes = [route(row, bias, k) for row in logits]
        chosen = [r["experts"] for r in routes]
        changed |= previous is not None and chosen != previous
        previous = chosen
        load = [sum(i in c for c in chosen) for i in range(n)]
        mean = mpf(sum(load)) / n
        bias = [c + mpf(gamma) * ((mean > l) - (mean < l)) for c, l in zip(bias, load)]
        history.append({"experts": chosen, "load": load, "bias": [s50(x) for x in bias]})
    assert changed
    return {"logits": [hexes(row) for row in logits], "top_k": k, "gamma": float(gamma).hex(),
            "steps": history}


def case_layer():
    # d = 4, 8 routed linear experts phi_i(u) = u W_i, one shared phi_s(u) = u S, top-2,
    # scale 2.5, with a bias that changes the selection.
    rng = Lcg(99)
    d, n, k = 4, 8, 2
    u = [rng.uniform(-1.0, 1.0) for _ in range(d)]
    router = [[rng.uniform(-1.0, 1.0) for _ in range(n)] for _ in range(d)]  # d x N
    experts = [[[rng.uniform(-0.5, 0.5) for _ in range(d)] for _ in range(d)] for _ in range(n)]
    shared = [[rng.uniform(-0.5, 0.5) for _ in range(d)] for _ in range(d)]
    logits = [sum(mpf(u[r]) * router[r][i] for r in range(d)) for i in range(n)]
    plain = route(logits, None, k)
    # Lift the best unselected expert just above the weaker selected one.
    weaker = min(plain["experts"], key=lambda i: plain["s"][i])
    cand = max((i for i in range(n) if i not in plain["experts"]), key=lambda i: plain["s"][i])
    lift = float(plain["s"][weaker] - plain["s"][cand]) + 0.01
    bias = [0.0] * n
    bias[cand] = lift
    r = route(logits, bias, k, scale=2.5)
    assert r["experts"] != plain["experts"]

    def lin(w, x):
        return [sum(mpf(x[a]) * w[a][b] for a in range(d)) for b in range(d)]

    h = [mpf(x) for x in u]
    for j, v in enumerate(lin(shared, u)):
        h[j] += v
    for g, i in zip(r["gates"], r["experts"]):
        for j, v in enumerate(lin(experts[i], u)):
            h[j] += g * v
    no_res = [h[j] - mpf(u[j]) for j in range(d)]
    return {"u": hexes(u), "router": [hexes(row) for row in router],
            "experts": [[hexes(row) for row in w] for w in experts],
            "shared": [hexes(row) for row in shared], "bias": hexes(bias), "top_k": k,
            "routed_scale": 2.5, "selected": r["experts"], "unbiased_selected": plain["experts"],
            "gates": [s50(x) for x in r["gates"]], "output": [s50(x) for x in h],
            "output_no_residual": [s50(x) for x in no_res]}


def main():
    data = {
        "generator": "tests/data/make_moe.py (mpmath %s, %d digits)" % (mpmath.__version__, mp.dps),
        "bias_flip": case_bias_flip(),
        "v3_groups": case_v3_groups(),
        "softmax": case_softmax(),
        "balance": case_balance(),
        "bias_update": case_bias_update(),
        "layer": case_layer(),
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "moe.json")
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
