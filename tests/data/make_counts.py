#!/usr/bin/env python3
"""Pinned values of the F23 closed forms at full model sizes, in exact Python integers.
Writes counts.json beside this script.

The formulas are typed from the notes (seeds/000 §2.1, §4.1, §4.2; 004 MLA), and the model
dimensions from the public configurations (independently of reference/presets.h, so the test
also cross-checks the preset table):
  GPT-3 175B   d 12288, h 96, d_head 128, d_ff 49152, context 2048        (Brown et al. 2020)
  Llama 2 70B  d 8192, h 64, g 8, d_head 128, d_ff 28672, context 4096    (config.json)
  Llama 3.1 405B d 16384, h 128, g 8, d_head 128, d_ff 53248, ctx 131072  (config.json; E07)
  PaLM 540B    d 18432, h 48, g 1 (MQA), d_head 256, d_ff 73728, ctx 2048 (Chowdhery et al.; E06)
  Gemma 2 9B   d 3584, h 16, g 8, d_head 256, d_ff 14336                  (config.json)
  GPT-2 small  d 768, h 12, d_ff 3072, biases                              (config.json)
  DeepSeek-V3  d 7168, h 128, d_h 128, d_c 512, d_h^R 64, 256+1 experts of d_ff 2048, top-8
"""
import json
import os


def ffn(d, d_ff, biases=False):  # d x d_ff + d_ff x d (+ b1 + b2)
    return 2 * d * d_ff + ((d_ff + d) if biases else 0)


def glu(d, d_ff):  # W, V: d x d_ff each; W2: d_ff x d
    return 3 * d * d_ff


def mha_params(h, d):  # 4 (hd)^2
    return 4 * (h * d) ** 2


def gqa_params(h, g, d):  # 2 (hd)^2 + 2 (hd)(gd)
    return 2 * (h * d) ** 2 + 2 * (h * d) * (g * d)


def attn_params_width(D, h, g, d):  # W_Q D x hd, W_K W_V D x gd, W_O hd x D
    return D * h * d + 2 * D * g * d + h * d * D


def flops_mha(b, T, h, d):  # 8 b T D^2 + 4 b h T^2 d
    D = h * d
    return 8 * b * T * D * D + 4 * b * h * T * T * d


def flops_general(b, T, D, h, g, d):
    return 2 * b * T * D * h * d * 2 + 2 * b * T * D * g * d * 2 + 4 * b * h * T * T * d


def decode_cached_mha(b, t, h, d):  # 8 b D^2 + 4 b h t d
    D = h * d
    return 8 * b * D * D + 4 * b * h * t * d


def kv_cache(b, t, g, d):  # 2 b g t d
    return 2 * b * g * t * d


def mla_cache(b, t, d_c, d_r):  # b t (d_c + d_h^R)
    return b * t * (d_c + d_r)


def memory_mha(b, T, h, d):  # 4(hd)^2 + bTD + 3bhTd + bhT^2
    D = h * d
    return 4 * D * D + b * T * D + 3 * b * h * T * d + b * h * T * T


def memory_gqa(b, T, h, k, d):  # 2(hd)^2 + 2hkd^2 + 2bTD + 2bkdT + bhT^2
    D = h * d
    return 2 * D * D + 2 * h * k * d * d + 2 * b * T * D + 2 * b * k * d * T + b * h * T * T


def moe(d, d_ff, n_routed, n_shared):
    return (n_routed + n_shared) * glu(d, d_ff) + d * n_routed


def moe_active(d, d_ff, n_routed, n_shared, k):
    return (k + n_shared) * glu(d, d_ff) + d * n_routed


def main():
    v = {}
    # GPT-3 175B, one sequence of 2048 tokens.
    v["gpt3_attention_params"] = mha_params(96, 128)
    v["gpt3_ffn_params"] = ffn(12288, 49152)
    v["gpt3_attention_flops_T2048"] = flops_mha(1, 2048, 96, 128)
    v["gpt3_kv_cache_T2048"] = kv_cache(1, 2048, 96, 128)
    v["gpt3_attention_memory_T2048"] = memory_mha(1, 2048, 96, 128)
    # Llama 2 70B.
    v["llama2_70b_attention_params"] = gqa_params(64, 8, 128)
    v["llama2_70b_glu_params"] = glu(8192, 28672)
    v["llama2_70b_attention_flops_T4096"] = flops_general(1, 4096, 8192, 64, 8, 128)
    v["llama2_70b_kv_cache_T4096"] = kv_cache(1, 4096, 8, 128)
    v["llama2_70b_attention_memory_T4096"] = memory_gqa(1, 4096, 64, 8, 128)
    # Llama 3.1 405B at its full 128K context.
    v["llama31_405b_attention_params"] = gqa_params(128, 8, 128)
    v["llama31_405b_glu_params"] = glu(16384, 53248)
    v["llama31_405b_kv_cache_T131072"] = kv_cache(1, 131072, 8, 128)
    v["llama31_405b_decode_cached_t131072"] = decode_cached_mha(1, 131072, 128, 128)
    v["llama31_405b_decode_uncached_t131073"] = flops_mha(1, 131073, 128, 128)
    # PaLM 540B (MQA: one KV head).
    v["palm_attention_params"] = gqa_params(48, 1, 256)
    v["palm_glu_params"] = glu(18432, 73728)
    v["palm_kv_cache_T2048"] = kv_cache(1, 2048, 1, 256)
    # Gemma 2 9B: width 3584 differs from h * d_head = 4096.
    v["gemma2_9b_attention_params"] = attn_params_width(3584, 16, 8, 256)
    v["gemma2_9b_glu_params"] = glu(3584, 14336)
    # GPT-2 small FFN with biases.
    v["gpt2_ffn_params_biases"] = ffn(768, 3072, True)
    # DeepSeek-V3: MLA cache vs an MHA cache of 2 h d_h per token; MoE parameters.
    v["deepseek_v3_mla_cache_T131072"] = mla_cache(1, 131072, 512, 64)
    v["deepseek_v3_mha_cache_T131072"] = kv_cache(1, 131072, 128, 128)
    v["deepseek_v3_moe_params"] = moe(7168, 2048, 256, 1)
    v["deepseek_v3_moe_active_params"] = moe_active(7168, 2048, 256, 1, 8)
    # Values over 2^53 are written as strings so no JSON reader rounds them.
    out = {k: str(x) for k, x in v.items()}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "counts.json")
    with open(path, "w") as f:
        json.dump({"generator": "tests/data/make_counts.py", "values": out}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
