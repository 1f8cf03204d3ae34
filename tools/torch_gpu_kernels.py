"""Judges the kernels users compare against on the GPU — PyTorch's own CUDA kernels, Inductor's
generated Triton kernels, transformers' modules and JAX's cuDNN attention — with the installed
lmoracle package (a wheel from tools/wheel: no build on the GPU machine), on the oracle's
built-in cases' inputs moved to the device.

    python3 tools/torch_gpu_kernels.py --out DIR [--device cuda|cpu] [--filter REGEX]

Each row: the kernel, the case and storage format, the verdict under `strict`, the first
recipe of the row's candidates it passes under (or none), the diagnosis of the strict run (the
best-ranked recipe and its share of bit-equal elements), and the worst element of a failure
(index, the kernel's value, the correctly rounded value, its distance in ulps). A kernel that
passes under no candidate is for triage: a real inaccuracy or an oracle gap.
DIR/torch-gpu-kernels.md is the table, DIR/torch-gpu-kernels.json the rows. Kernels that a
machine cannot run (no cuDNN attention, no transformers, no JAX GPU) are rows with their reason.
`--device cpu` runs the same kernels' CPU versions: a check of this script, not of CUDA's
kernels. Exit 0 when every row ran (whatever its verdict), 1 when a row raised, 2 bad usage."""
import argparse
import json
import math
import pathlib
import re
import sys
import time
import traceback

import lmoracle

FORMATS = {"bf16": "bfloat16", "f16": "float16", "f32": "float32"}


def torch_dtype(torch, fmt):
    return getattr(torch, FORMATS[fmt])


def inputs_on(torch, case_id, fmt, device):
    """The case's generated inputs in storage format fmt, as torch tensors on the device; the
    op-name form so that any format is allowed, with the case's own parameters and seed."""
    c = lmoracle.cases(f"^{re.escape(case_id)}$")[0]
    x = lmoracle.case(c.op, format=fmt, seed=c.seed, array="torch", **c.params)
    return c, {k: v.to(device) for k, v in x.items()}


# --- the kernels -------------------------------------------------------------------------------

def sdpa_kernel_fn(backend_name, mask_kind):
    def run(torch, F, x, p):
        from torch.nn.attention import SDPBackend, sdpa_kernel
        h, g, d = p["h"], p["g"], p["d"]
        q, k, v = x["q"], x["k"], x["v"]
        t = q.shape[0]

        def heads(a, n):  # [tokens, n·d] → [1, n, tokens, d]
            return a.view(t, n, d).transpose(0, 1).unsqueeze(0)

        kw = {"scale": p.get("scale", 1 / math.sqrt(d))}
        if mask_kind == "causal":
            kw["is_causal"] = True
        elif mask_kind == "window":
            i = torch.arange(t, device=q.device)
            keep = (i[None, :] <= i[:, None]) & (i[:, None] - i[None, :] < p["window"])
            kw["attn_mask"] = keep
        qh, kh, vh = heads(q, h), heads(k, g), heads(v, g)
        if g != h:
            kw["enable_gqa"] = True
        with sdpa_kernel([getattr(SDPBackend, backend_name)]):
            o = F.scaled_dot_product_attention(qh, kh, vh, **kw)
        return {"o": o[0].transpose(0, 1).reshape(t, h * d)}
    return run


def rms_norm(torch, F, x, p):
    return {"y": F.rms_norm(x["x"], (p["d"],), x["gamma"], p["eps"])}


def layer_norm(torch, F, x, p):
    return {"y": F.layer_norm(x["x"], (p["d"],), x["gamma"], x["beta"], p["eps"])}


def softmax(torch, F, x, p):
    return {"p": F.softmax(x["z"], dim=-1)}


def cross_entropy(torch, F, x, p):
    z = x["z"]
    loss = F.cross_entropy(z, x["target"].long(), reduction="none")
    logz = torch.logsumexp(z.float(), dim=-1).to(z.dtype)
    zf = z.float().detach().requires_grad_(True)
    F.cross_entropy(zf, x["target"].long(), reduction="sum").backward()
    return {"loss": loss, "logz": logz, "grad": zf.grad.to(z.dtype)}


def unary(fn):
    def run(torch, F, x, p):
        return {"y": fn(torch, F, x["x"])}
    return run


def swiglu_gate(torch, F, x, p):
    return {"y": F.silu(x["a"]) * x["b"]}


def hf_llama_rmsnorm(torch, F, x, p):
    from transformers.models.llama.modeling_llama import LlamaRMSNorm
    m = LlamaRMSNorm(p["d"], eps=p["eps"]).to(x["x"].device, x["x"].dtype)
    with torch.no_grad():
        m.weight.copy_(x["gamma"])
        return {"y": m(x["x"])}


def hf_llama_mlp(torch, F, x, p):
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaMLP
    cfg = LlamaConfig(hidden_size=p["d"], intermediate_size=p["d_ff"], hidden_act="silu",
                      mlp_bias=False)
    m = LlamaMLP(cfg).to(x["x"].device, x["x"].dtype)
    with torch.no_grad():  # nn.Linear holds W as [out, in]; the oracle's w is [d, d_ff]
        m.gate_proj.weight.copy_(x["w"].T)
        m.up_proj.weight.copy_(x["v"].T)
        m.down_proj.weight.copy_(x["w2"].T)
        return {"y": m(x["x"])}


def hf_llama_rope(torch, F, x, p):
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import (LlamaRotaryEmbedding,
                                                          apply_rotary_pos_emb)
    heads, dim = p["heads"], p["head_dim"]
    cfg = LlamaConfig(hidden_size=heads * dim, num_attention_heads=heads,
                      rope_theta=p["base"], max_position_embeddings=p["max_position"])
    emb = LlamaRotaryEmbedding(cfg, device=x["x"].device)
    t = x["x"].shape[0]
    q = x["x"].view(1, t, heads, dim).transpose(1, 2)
    cos, sin = emb(q, x["positions"].long()[None, :])
    y, _ = apply_rotary_pos_emb(q, q, cos, sin)
    return {"y": y.transpose(1, 2).reshape(t, heads * dim)}


def compiled(fn):
    """fn through torch.compile (Inductor's generated kernels), compiled on its first call."""
    box = []

    def run(torch, F, x, p):
        if not box:
            box.append(torch.compile(lambda xx, pp: fn(torch, F, xx, pp), dynamic=False))
        return box[0](x, p)
    return run


def jax_cudnn_attention(torch, F, x, p):
    import jax
    import jax.numpy as jnp
    import numpy as np
    h, g, d = p["h"], p["g"], p["d"]
    t = x["q"].shape[0]

    dtype = {torch.bfloat16: jnp.bfloat16, torch.float16: jnp.float16}[x["q"].dtype]

    def to_jax(a):  # through f32, which holds every bf16 and f16 value exactly
        return jnp.asarray(a.float().cpu().numpy()).astype(dtype)

    q = to_jax(x["q"]).reshape(1, t, h, d)
    k = to_jax(x["k"]).reshape(1, t, g, d)
    v = to_jax(x["v"]).reshape(1, t, g, d)
    o = jax.nn.dot_product_attention(q, k, v, is_causal=p.get("mask") == "causal",
                                     implementation="cudnn")
    return {"o": np.asarray(o).reshape(t, h * d)}


GELU_EXACT = unary(lambda torch, F, a: F.gelu(a))
GELU_TANH = unary(lambda torch, F, a: F.gelu(a, approximate="tanh"))
SILU = unary(lambda torch, F, a: F.silu(a))

ATTN = ["flash-attention", "flash-attention+fma"]
# (kernel name, function, built-in case, formats, the recipes to try after strict)
KERNELS = []
for backend in ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH"):
    KERNELS += [
        (f"sdpa[{backend.lower()}] causal GQA", sdpa_kernel_fn(backend, "causal"),
         "attention/llama2-70b-gqa-causal", ("bf16", "f16"), ATTN),
        (f"sdpa[{backend.lower()}] window mask", sdpa_kernel_fn(backend, "window"),
         "attention/mistral-7b-window", ("bf16", "f16"), ATTN),
    ]
KERNELS += [
    ("F.rms_norm", rms_norm, "rmsnorm/llama3-8b", ("f32", "bf16"), ["hf-llama-rmsnorm", "strict+fma"]),
    ("F.layer_norm", layer_norm, "layernorm/gpt2-small", ("f32", "bf16"), ["strict+fma"]),
    ("F.softmax", softmax, "softmax/attention-row", ("f32", "bf16"), ["strict+fma"]),
    ("F.cross_entropy", cross_entropy, "cross-entropy/llama2-vocab", ("f32", "bf16"), ["strict+fma"]),
    ("F.gelu", GELU_EXACT, "gelu/exact", ("f32", "bf16"), ["torch-gelu", "torch-gelu+fma"]),
    ("F.gelu(tanh)", GELU_TANH, "gelu-tanh/gpt2-small", ("f32", "bf16"),
     ["torch-gelu-tanh", "torch-gelu-tanh+fma"]),
    ("F.silu", SILU, "silu/basic", ("f32", "bf16"), ["torch-silu", "torch-silu+fma"]),
    ("transformers LlamaRMSNorm", hf_llama_rmsnorm, "rmsnorm/llama3-8b", ("bf16",),
     ["hf-llama-rmsnorm"]),
    ("transformers Llama rotary", hf_llama_rope, "rope/llama3-8b", ("bf16",), ["hf-rope"]),
    ("transformers LlamaMLP", hf_llama_mlp, "glu-ffn/llama3-8b-swiglu", ("bf16",), ["torch-mlp"]),
    ("torch.compile RMSNorm", compiled(rms_norm), "rmsnorm/llama3-8b", ("f32", "bf16"),
     ["hf-llama-rmsnorm", "strict+fma"]),
    ("torch.compile softmax", compiled(softmax), "softmax/attention-row", ("f32", "bf16"),
     ["strict+fma"]),
    ("torch.compile cross-entropy", compiled(cross_entropy), "cross-entropy/llama2-vocab",
     ("f32", "bf16"), ["strict+fma"]),
    ("torch.compile SwiGLU", compiled(swiglu_gate), "swiglu-gate/llama3-8b", ("f32", "bf16"),
     ["torch-silu", "torch-silu+fma"]),
    ("jax cuDNN attention", jax_cudnn_attention, "attention/llama2-70b-gqa-causal", ("bf16",), ATTN),
]


def worst(verdict):
    bad = [o for o in verdict.outputs.values() if not o.passed]
    if not bad:
        return ""
    o = bad[0]
    return (f"{o.name}{list(o.worst_index) if o.worst_index else ''}: {o.worst_actual!r} vs "
            f"{o.worst_expected!r} ({o.worst_ulps} ulp; bound {o.bound})")


def judge(torch, F, name, fn, case_id, fmt, recipes, device):
    row = {"kernel": name, "case": case_id, "format": fmt, "device": device}
    try:
        c, x = inputs_on(torch, case_id, fmt, device)
        p = dict(c.params)
        t0 = time.monotonic()
        out = fn(torch, F, x, p)
        if device == "cuda":
            torch.cuda.synchronize()
        row["kernel_s"] = round(time.monotonic() - t0, 3)
        out = {k: (v.detach() if hasattr(v, "detach") else v) for k, v in out.items()}
        strict = lmoracle.check(c.op, x, out, seed=c.seed, diagnose=True, **p)
        row["strict"] = "PASS" if strict.passed else "FAIL"
        row["worst"] = worst(strict)
        d = strict.diagnosis or []
        row["diagnosis"] = f"{d[0]['recipe']} ({100 * d[0]['equal']:.1f} % equal)" if d else ""
        row["passes_under"] = "strict" if strict.passed else ""
        if not strict.passed:
            for r in recipes:
                if lmoracle.check(c.op, x, out, recipe=r, seed=c.seed, **p).passed:
                    row["passes_under"] = r
                    break
            else:
                row["passes_under"] = "none: triage"
    except ImportError as e:
        row["not_run"] = f"not installed: {e.name or e}"
    except Exception as e:  # a backend a device lacks: recorded, not fatal
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        unavailable = ("no available kernel", "no viable backend", "not supported",
                       "not detected")
        if any(u in str(e).lower() for u in unavailable):
            row["not_run"] = msg[:160]
        else:
            row["error"] = f"{type(e).__name__}: {msg[:200]}"
            row["trace"] = traceback.format_exc()[-2000:]
    return row


def table(rows, command):
    lines = ["| kernel | case | format | strict | passes under | diagnosis (strict) | worst element |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        if "strict" in r:
            cells = [r["strict"], r["passes_under"], r["diagnosis"], r["worst"]]
        else:
            cells = ["—", r.get("not_run") or r.get("error"), "", ""]
        lines.append("| " + " | ".join([r["kernel"], r["case"], r["format"]] + cells) + " |")
    return "\n".join(lines) + f"\n\nCommand: `{command}`\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--filter", default="", help="a regular expression on the kernel's name")
    a = ap.parse_args()
    import torch
    import torch.nn.functional as F
    if a.device == "cuda" and not torch.cuda.is_available():
        print("torch_gpu_kernels: no CUDA device", file=sys.stderr)
        return 2
    rx = re.compile(a.filter)
    rows = []
    for name, fn, case_id, formats, recipes in KERNELS:
        if not rx.search(name):
            continue
        for fmt in formats:
            r = judge(torch, F, name, fn, case_id, fmt, recipes, a.device)
            print(json.dumps({k: v for k, v in r.items() if k != "trace"}), flush=True)
            rows.append(r)
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    meta = {"lmoracle": lmoracle.__version__, "torch": torch.__version__,
            "device": torch.cuda.get_device_name() if a.device == "cuda" else "cpu",
            "date": time.strftime("%Y-%m-%d", time.gmtime())}
    (out / "torch-gpu-kernels.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    (out / "torch-gpu-kernels.md").write_text(
        f"{meta}\n\n" + table(rows, "python3 tools/torch_gpu_kernels.py " + " ".join(sys.argv[1:])))
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
