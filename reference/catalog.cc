#include "reference/catalog.h"

namespace lmo::ref {

namespace {
constexpr CatalogRow kRows[] = {
    {"F01", "LayerNorm",
     "norms.h: layernorm; norms_grad.h: layernorm_backward"},
    {"F02", "RMSNorm (and Gemma 1+γ; E01 literal form)",
     "norms.h: rmsnorm, rmsnorm_gemma, rmsnorm_literal_e01; norms_grad.h: rmsnorm_backward, rmsnorm_gemma_backward"},
    {"F03", "FFN, ReLU with bias",
     "ffn.h: ffn_relu_bias, ffn_with_bias"},
    {"F04", "FFN, bias-free",
     "ffn.h: ffn"},
    {"F05", "GLU family",
     "ffn.h: glu_ffn, reglu, geglu, geglu_tanh, swiglu; ffn_grad.h: glu_gate_backward"},
    {"F06", "activations",
     "activations.h: gelu, gelu_tanh, swish, silu, relu, sigmoid; activations_grad.h: gelu_grad, gelu_tanh_grad, swish_grad, silu_grad, relu_grad"},
    {"F07", "sinusoidal PE",
     "positional.h: sinusoidal_pe, sinusoidal_pe_table"},
    {"F08", "learned absolute position",
     "positional.h: learned_position_embed"},
    {"F09", "relative position logits (Shaw; T5 bias)",
     "positional.h: shaw_relative_logits, shaw_relative_logits_qk, t5_relative_position_bucket, t5_relative_position_bias"},
    {"F10", "RoPE (interleaved, half-split, partial)",
     "rope.h: rope_inv_freq, rope, rope_position, rope_sequence, rope_table, rope_from_table, rope_backward, rope_from_table_backward"},
    {"F11", "RoPE for long context",
     "rope_scaling.h: rope_inv_freq_linear, rope_interpolated_position, rope_ntk_base, rope_inv_freq_ntk, rope_inv_freq_yarn, rope_inv_freq_yarn_paper, yarn_mscale, rope_inv_freq_llama3"},
    {"F12", "softmax, log-sum-exp, cross-entropy",
     "softmax.h: softmax, logsumexp, cross_entropy"},
    {"F13", "z-loss",
     "softmax.h: z_loss, z_loss_grad, softmax_cross_entropy"},
    {"F14", "logit soft-capping",
     "softmax.h: softcap, softcap_grad"},
    {"F15", "attention (MHA/GQA/MQA, masks, soft-cap)",
     "attention.h: attention, attention_probs; attention_grad.h: attention_backward"},
    {"F16", "KV-cache decoding",
     "kv_cache.h: KvCache, prefill, decode_step"},
    {"F17", "online (tiled) softmax and attention",
     "attention_online.h: online_softmax, online_logsumexp, attention_tiled"},
    {"F18", "block layouts",
     "blocks.h: post_ln_block, pre_ln_block, double_norm_block, olmo2_block, parallel_block, parallel_block_fused; decoder.h: decoder_layer, decoder_stack; preset_reduce.h: reduce"},
    {"F19", "MLA (naive and absorbed)",
     "mla.h: mla_naive, mla_absorb, mla_absorbed, mla_absorbed_decode_step"},
    {"F20", "MoE routing and layer",
     "moe.h: route, route_tokens, dense_gates, moe_layer"},
    {"F21", "load-balance loss",
     "moe.h: load_balance_loss"},
    {"F22", "auxiliary-loss-free balancing",
     "moe.h: update_balance_bias"},
    {"F23", "parameter, FLOP and memory counts",
     "counts.h: ffn_params, glu_ffn_params, mha_params, gqa_params, attention_flops, decode_step_flops, kv_cache_elements, mla_cache_elements; counted.h: Counted"},
};
}  // namespace

std::span<const CatalogRow> formula_catalog() { return kRows; }

}  // namespace lmo::ref
