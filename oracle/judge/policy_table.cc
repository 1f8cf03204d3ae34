#include "oracle/judge/policy_table.h"

#include <stdexcept>
#include <string>

namespace lmo::oracle {
namespace {

// Rule (3)'s margin, in ulps of the output: 2^-8. A narrow result computed in f32 carries its f32
// error (a few f32 ulps = 2^-13 ulp of f16/tf32, 2^-16 ulp of bf16, each times a few) into the
// final rounding, so it can only flip the last bit within far less than 2^-8 ulp of a midpoint;
// a random exact value lies that close with probability 2^-7, so a rounding bug (truncation
// flips about half of all values) is still seen almost everywhere.
constexpr double kMargin = 1.0 / 256;

// The multiple of u·S that a composition with an error scale S takes as its naive bound where
// that is larger than twice the naive run's error (policy.h, rule (2);
// oracle/ops/ffn_error_scale.h): with independent roundings uniform in ±u·m, a correct
// kernel's error has standard deviation u·S/√3, so 4·u·S is 6.9 standard deviations. A kernel
// that keeps its hidden layer in bf16 errs by about 2^-9·√d_ff times the hidden terms' size
// where u·S is about 2^-24·d_ff times it, so it stays caught far beyond today's widths
// (tests/oracle_mutation_ffn_test.cc: on 256 of 256 outputs at d_ff 256, 63 of 64 at 8192).
constexpr double kErrorScale = 4;

// Wide k: in f32 ulps (the compute precision of fast/ and gpu/): the ulps of the functions'
// own evaluation plus ½ ulp per rounding after them; narrow k: 0, a kernel computing in f32
// rounds once at the store (see policy.h). Where the inner function is evaluated at a rounded
// argument, the argument's relative error (last constant, in u = 2^-24) is amplified by the
// function's condition number per element (Policy::arg_error): ≈ x² ulps for GELU's tail, which
// no constant k covers.
constexpr PolicyEntry kTable[] = {
    // Norms: reductions over the hidden dimension.
    {"rmsnorm", "", naive_policy(),
     "mean of squares over d, a root and a scale: a reduction, judged against the naive run"},
    {"rmsnorm_gemma", "", naive_policy(),
     "RMS reduction over d, then x·(1 + w): a reduction, judged against the naive run"},
    {"layernorm", "", naive_policy(),
     "mean and variance over d with cancellation in x − mean: a reduction"},
    {"fused_add_rmsnorm", "residual", ulp_policy(0, 0, kMargin),
     "x + r is one addition, correctly rounded in f32; margin: the second rounding to narrow"},
    {"fused_add_rmsnorm", "y", naive_policy(),
     "RMSNorm of x + r: a reduction over d, judged against the naive run"},

    // Elementwise activations and GLU gates.
    {"relu", "", ulp_policy(0, 0),
     "max(x, 0) is an input value or 0: only the store rounds, exactly as the reference does"},
    {"gelu", "", ulp_policy(4, 0, kMargin, 2),
     "f32: erfc (≤2 ulp) of −x/√2 (√2 and the quotient: 2u, times erfc's κ), x/2·(·); narrow: "
     "once"},
    {"gelu_tanh", "", ulp_policy(4, 0, kMargin, 7),
     "f32: sigmoid (≤3 ulp) of 2√(2/π)(x + 0.044715x³) (7 roundings: 7u, times κ), x·(·)"},
    {"silu", "", ulp_policy(3, 0, kMargin),
     "f32: exp (≤2 ulp), 1 + e^−x (condition ≤1), x/(·) (½ ulp); narrow: rounded once"},
    {"swiglu_gate", "", ulp_policy(4, 0, kMargin),
     "f32: silu(a) (≤3 ulp) times b (½ ulp); narrow: rounded once"},
    {"geglu_gate", "", ulp_policy(5, 0, kMargin, 2),
     "f32: gelu(a) (≤4 ulp, argument 2u) times b (½ ulp); narrow: rounded once"},
    {"geglu_tanh_gate", "", ulp_policy(5, 0, kMargin, 7),
     "f32: gelu_tanh(a) (≤4 ulp, argument 7u) times b (½ ulp); narrow: rounded once"},
    {"reglu_gate", "", ulp_policy(0, 0, kMargin),
     "relu(a)·b is one product, correctly rounded in f32; margin: the second rounding to narrow"},
    {"softcap", "", ulp_policy(3, 0, kMargin),
     "f32: z/cap (½ ulp), tanh (≤2 ulp, condition ≤1), ×cap (½ ulp); narrow: rounded once"},

    // Softmax family: reductions over the row.
    {"softmax", "", naive_policy(), "exp, a row sum and a division: a reduction over the row"},
    {"logsumexp", "", naive_policy(), "m + log Σ e^(z−m): a reduction over the row"},
    {"cross_entropy", "loss", naive_policy(), "−z_t + log Z: log Z is a reduction over the row"},
    {"cross_entropy", "logz", naive_policy(), "log Σ e^z: a reduction over the row"},
    {"cross_entropy", "grad", naive_policy(),
     "p_j − [j = t] (+ z-loss term): p depends on the row sum, a reduction"},
    {"online_softmax", "", naive_policy(),
     "tiled running max and rescaled partial sums: a reduction in another order than the naive"},

    // Positional encodings.
    {"sinusoidal_pe", "", naive_policy(),
     "sin/cos of p·10000^(−2i/d), phase rounded first: only an absolute bound holds near zeros"},
    // rope_table's row said "phase rounded first", but its kernel forms no phase: the cos/sin
    // table is an input (ops/rope.h), so what it computes is the rotation alone.
    {"rope_table", "", naive_policy(),
     "x_a·c − x_b·s from the given table: products and a difference, cancellation: absolute"},
    {"rope", "", naive_policy(),
     "x·cos − y·sin with a rounded phase: cancellation, absolute error"},
    {"learned_position", "", ulp_policy(0, 0, kMargin),
     "v_x + u_i is one addition, correctly rounded in f32; margin: the second rounding to narrow"},
    {"shaw_logits", "", naive_policy(2, 0.5, 2, kErrorScale),
     "q·(k + a_clip(j−i)) / √d_k: dot products; error scale: q·k + q·a apart (two GEMMs) too"},
    {"t5_bias", "", ulp_policy(0, 0),
     "a gather from the bias table: copied, never computed; a changed value is a wrong bucket"},

    // Attention and MLA: compositions of GEMMs and a softmax (the FlashAttention rule).
    {"attention", "", naive_policy(), "QKᵀ, softmax and PV: a composition of reductions"},
    {"attention_decode", "", naive_policy(),
     "one query against the KV cache: QKᵀ, softmax and PV, reductions over the cache"},
    {"paged_attention_decode", "", naive_policy(),
     "attention_decode per sequence on the cache its page table names: the same reductions"},
    {"mla_decode", "", naive_policy(),
     "latent up-projections, QKᵀ, softmax and PV: a composition of reductions"},
    {"paged_mla_decode", "", naive_policy(),
     "mla_decode per sequence on the latent cache its page table names: the same reductions"},

    // FFN blocks: GEMMs around an activation.
    {"ffn", "", naive_policy(2, 0.5, 2, kErrorScale),
     "two matrix products around an activation: a composition (with its error scale)"},
    {"glu_ffn", "", naive_policy(2, 0.5, 2, kErrorScale),
     "gate and up products, a GLU gate, a down product (with its error scale)"},

    // Mixture of experts.
    {"moe_router", "gates", naive_policy(),
     "s_i / Σ_selected s_j × routed scale: a reduction over the selected experts"},
    {"moe_router", "experts", topk_policy(1.0 / 128),
     "scores (a logit dot product) may be stored in bf16 (2^-9): 2^-7 of the row scale is a tie"},
    {"load_balance_loss", "", naive_policy(), "α·N·Σ f_i·P_i: reductions over tokens and experts"},
    {"moe_layer", "", naive_policy(),
     "router GEMM, routing, GLU expert GEMMs and the gate-weighted sum: a composition"},
    {"aux_free_update", "", ulp_policy(0, 0, kMargin, 1),
     "c ± γ: one sum, rounded once; the f32 constant γ is off by u, times κ = |γ|/|c ± γ|"},

    // fp8 scaling (reference/fp8_scaling.h).
    {"fp8_quantize", "scales", ulp_policy(0, 0),
     "amax/M is one division, correctly rounded to f32 (ue8m0: a power of two); dequantization "
     "reads this very value, so it must be the reference's"},
    {"fp8_quantize", "q", ulp_policy(0, 0, kMargin),
     "x/s rounded once to fp8 (saturating); margin: a kernel multiplying by an f32 reciprocal "
     "(2^-23 relative) crosses a midpoint only within 2^-20 of an fp8 ulp"},
    {"fp8_dequantize", "", ulp_policy(0, 0, kMargin),
     "q·s is one product, correctly rounded in f32; margin: the second rounding to narrow"},
    {"fp8_linear", "", naive_policy(),
     "a GEMM of dequantized operands (per-block partial sums scaled in f32): a reduction over k"},

    // Blocks.
    {"decoder_block", "", naive_policy(),
     "norms, attention, FFN and residual sums: a composition of reductions"},
};

std::string known_ops() {
  std::string s;
  std::string_view last;
  for (const PolicyEntry& e : kTable) {
    if (e.op == last) continue;
    if (!s.empty()) s += ", ";
    s += e.op;
    last = e.op;
  }
  return s;
}

}  // namespace

std::span<const PolicyEntry> policy_table() { return kTable; }

const PolicyEntry& policy_entry(std::string_view op, std::string_view output) {
  const PolicyEntry* fallback = nullptr;
  std::string outputs;
  bool known = false;
  for (const PolicyEntry& e : kTable) {
    if (e.op != op) continue;
    known = true;
    if (!output.empty() && e.output == output) return e;
    if (e.output.empty()) {
      fallback = &e;
    } else {
      if (!outputs.empty()) outputs += ", ";
      outputs += e.output;
    }
  }
  if (!known) {
    throw std::invalid_argument("no tolerance policy for op '" + std::string(op) +
                                "'; known ops: " + known_ops());
  }
  if (fallback) return *fallback;
  throw std::invalid_argument("op '" + std::string(op) + "' has outputs judged differently (" +
                              outputs + "); got output '" + std::string(output) +
                              "', expected one of them");
}

}  // namespace lmo::oracle
