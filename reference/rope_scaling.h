// F11 RoPE for long context (002 "NTK-scaled / extended RoPE"; 004 "Long context extension:
// YaRN"): each rule is a function producing the inverse frequencies h(θ_k), k = 0 … r/2 − 1, to
// use with rope / rope_table in place of rope_inv_freq (plus, for YaRN, the attention
// temperature). θ_k = rope_inv_freq(r, base)[k] = base^(−2k/r); s is the context scale factor.
// Every rule is evaluated in T as written, so a narrow T shows what a kernel computing the
// frequencies in that type gets.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/numeric.h"
#include "reference/rope.h"

namespace lmo::ref {

namespace rope_detail {
template <class T>
void require_scale(const T& scale, const char* who) {
  if (!(scale > T(0))) {
    throw std::invalid_argument(std::string(who) + ": scale must be positive, got " +
                                to_mp(scale).str());
  }
}
}  // namespace rope_detail

// F11 position interpolation (Chen, Wong, Chen & Tian 2023, "Extending Context Window of Large
// Language Models via Positional Interpolation", arXiv:2306.15595, eq. 4): f'(x, p) = f(x, p/s),
// s = L'/L. Rotating at p/s equals rotating at p with θ_k/s; this returns θ_k / s (HF
// transformers' rope_type "linear" divides inv_freq the same way). The two orders of rounding
// differ by an ulp or so; rope_interpolated_position gives the other one.
template <class T>
std::vector<T> rope_inv_freq_linear(int64_t rotary_dims, const T& base, const T& scale) {
  rope_detail::require_scale(scale, "rope_inv_freq_linear");
  std::vector<T> inv = rope_inv_freq(rotary_dims, base);
  for (T& v : inv) v = v / scale;
  return inv;
}

// F11 position interpolation in its position form: p / s.
template <class T>
T rope_interpolated_position(const T& position, const T& scale) {
  rope_detail::require_scale(scale, "rope_interpolated_position");
  return position / scale;
}

// F11 NTK-aware base (bloc97, "NTK-Aware Scaled RoPE", r/LocalLLaMA, June 2023; written as
// b' = b · s^(|D|/(|D|−2)) in Peng et al. 2023, arXiv:2309.00071 §3.1): the base grows so that
// the lowest frequency θ_{r/2−1} is interpolated by exactly s while θ_0 = 1 is unchanged.
// r is the rotary dimension of one head (E08), as in the published code.
template <class T>
T rope_ntk_base(const T& base, const T& scale, int64_t rotary_dims) {
  using std::pow;
  rope_detail::require_scale(scale, "rope_ntk_base");
  if (rotary_dims <= 2 || rotary_dims % 2 != 0) {
    throw std::invalid_argument("rope_ntk_base: rotary dimension must be even and > 2, got " +
                                std::to_string(rotary_dims));
  }
  return base * T(pow(scale, T(T(rotary_dims) / T(rotary_dims - 2))));
}

// F11 NTK-aware scaling: rope_inv_freq with the base of rope_ntk_base.
template <class T>
std::vector<T> rope_inv_freq_ntk(int64_t rotary_dims, const T& base, const T& scale) {
  return rope_inv_freq(rotary_dims, rope_ntk_base(base, scale, rotary_dims));
}

// F11 YaRN frequencies as defined in the paper (Peng, Quesnelle, Fan & Shippole 2023,
// arXiv:2309.00071 §3.2 "NTK-by-parts"; 004 "YaRN"): with L the original context length,
//   r(k) = L / λ_k,  λ_k = 2π / θ_k   (how many turns pair k makes over the original context),
//   γ(r) = 0 if r < α;  1 if r > β;  (r − α) / (β − α) otherwise,
//   h(θ_k) = (1 − γ(r(k))) · θ_k / s + γ(r(k)) · θ_k.
// α = 1, β = 32 in the paper (for Llama). Pairs turning fewer than α times are interpolated,
// more than β times kept; between, the ramp is linear in r. The published code (and so every
// model) uses a different ramp: see rope_inv_freq_yarn.
template <class T>
std::vector<T> rope_inv_freq_yarn_paper(int64_t rotary_dims, const T& base, const T& scale,
                                        int64_t original_context, const T& alpha = T(1),
                                        const T& beta = T(32)) {
  rope_detail::require_scale(scale, "rope_inv_freq_yarn_paper");
  if (original_context <= 0) {
    throw std::invalid_argument(
        "rope_inv_freq_yarn_paper: original_context must be positive, got " +
        std::to_string(original_context));
  }
  if (!(alpha < beta)) {
    throw std::invalid_argument("rope_inv_freq_yarn_paper: need alpha < beta, got " +
                                to_mp(alpha).str() + " and " + to_mp(beta).str());
  }
  std::vector<T> inv = rope_inv_freq(rotary_dims, base);
  const T two_pi = T(2) * pi<T>();
  const T length = from_mp<T>(mp(original_context));
  for (T& theta : inv) {
    const T wavelength = two_pi / theta;
    const T turns = length / wavelength;
    const T gamma = turns < alpha  ? T(0)
                    : turns > beta ? T(1)
                                   : T(T(turns - alpha) / T(beta - alpha));
    theta = T(T(T(1) - gamma) * T(theta / scale)) + T(gamma * theta);
  }
  return inv;
}

// F11 YaRN frequencies as released (Peng et al.'s code, jquesnelle/yarn; HF transformers'
// rope_type "yarn"; DeepSeek-V2/V3's yarn_find_correction_range and yarn_linear_ramp_mask),
// which is the rule trained models use. The thresholds α = beta_slow and β = beta_fast turns are
// converted to dimension indices, then the ramp is linear in the index k, not in r:
//   dim(n) = r · ln(L / (2π n)) / (2 ln base)   (the k where pair k turns n times over L),
//   lo = ⌊dim(beta_fast)⌋, hi = ⌈dim(beta_slow)⌉ (without truncate: unrounded), then
//   lo = max(lo, 0), hi = min(hi, r − 1)   (r − 1, not r/2 − 1: as published);
//   if lo = hi then hi = hi + 0.001   (the code's guard against 0/0);
//   ramp_k = clamp((k − lo) / (hi − lo), 0, 1),
//   h(θ_k) = θ_k / s · ramp_k + θ_k · (1 − ramp_k).
// So pairs k ≤ lo (fast: > beta_fast turns) keep θ_k and pairs k ≥ hi are interpolated, as in
// the paper, but the blend between differs from rope_inv_freq_yarn_paper.
template <class T>
std::vector<T> rope_inv_freq_yarn(int64_t rotary_dims, const T& base, const T& scale,
                                  int64_t original_context, const T& beta_fast = T(32),
                                  const T& beta_slow = T(1), bool truncate = true) {
  using std::floor;
  using std::log;
  rope_detail::require_scale(scale, "rope_inv_freq_yarn");
  if (original_context <= 0) {
    throw std::invalid_argument("rope_inv_freq_yarn: original_context must be positive, got " +
                                std::to_string(original_context));
  }
  if (!(beta_fast > T(0)) || !(beta_slow > T(0))) {
    throw std::invalid_argument("rope_inv_freq_yarn: beta_fast and beta_slow must be positive");
  }
  std::vector<T> inv = rope_inv_freq(rotary_dims, base);
  const T dims = T(rotary_dims);
  const T length = from_mp<T>(mp(original_context));
  const T two_pi = T(2) * pi<T>();
  const T two_log_base = T(2) * T(log(base));
  auto correction_dim = [&](const T& turns) {
    return T(T(dims * T(log(T(length / T(turns * two_pi))))) / two_log_base);
  };
  T lo = correction_dim(beta_fast), hi = correction_dim(beta_slow);
  if (truncate) {
    lo = floor(lo);
    hi = -T(floor(T(-hi)));  // ceil
  }
  if (lo < T(0)) lo = T(0);
  if (hi > T(dims - T(1))) hi = T(dims - T(1));
  if (lo == hi) hi = hi + constant<T>("0.001");
  for (size_t k = 0; k < inv.size(); ++k) {
    T ramp = T(T(T(static_cast<int64_t>(k)) - lo) / T(hi - lo));
    if (ramp < T(0)) ramp = T(0);
    if (ramp > T(1)) ramp = T(1);
    const T theta = inv[k];
    inv[k] = T(T(theta / scale) * ramp) + T(theta * T(T(1) - ramp));
  }
  return inv;
}

// F11 YaRN attention temperature (Peng et al. 2023 §3.4): logits q·k / (t sqrt(d)) with
// sqrt(1/t) = 0.1 ln s + 1. The published code generalizes it to 0.1 · mscale · ln s + 1 and
// returns 1 for s ≤ 1; mscale = 1 is the paper's value. Models apply it either to cos and sin
// (HF "attention_factor": both q and k scaled, logits by its square) or, as DeepSeek-V2/V3
// do with mscale_all_dim, to the softmax scale squared.
template <class T>
T yarn_mscale(const T& scale, const T& mscale = T(1)) {
  using std::log;
  rope_detail::require_scale(scale, "yarn_mscale");
  if (!(scale > T(1))) return T(1);
  return T(T(constant<T>("0.1") * mscale) * T(log(scale))) + T(1);
}

// F11 Llama 3.1 frequency scaling (Meta, llama-models reference code `apply_scaling`, July
// 2024; HF transformers' rope_type "llama3"). With λ_k = 2π / θ_k and L the original context:
//   λ_k < L / high_freq_factor  →  θ_k unchanged;
//   λ_k > L / low_freq_factor   →  θ_k / factor;
//   otherwise  smooth = (L / λ_k − low_freq_factor) / (high_freq_factor − low_freq_factor),
//              h(θ_k) = (1 − smooth) · θ_k / factor + smooth · θ_k.
// Published constants: factor 8, low_freq_factor 1, high_freq_factor 4, L = 8192 (with base
// 500000, r = 128 for Llama 3.1).
template <class T>
std::vector<T> rope_inv_freq_llama3(int64_t rotary_dims, const T& base, const T& factor = T(8),
                                    const T& low_freq_factor = T(1),
                                    const T& high_freq_factor = T(4),
                                    int64_t original_context = 8192) {
  rope_detail::require_scale(factor, "rope_inv_freq_llama3");
  if (original_context <= 0) {
    throw std::invalid_argument("rope_inv_freq_llama3: original_context must be positive, got " +
                                std::to_string(original_context));
  }
  if (!(T(0) < low_freq_factor && low_freq_factor < high_freq_factor)) {
    throw std::invalid_argument(
        "rope_inv_freq_llama3: need 0 < low_freq_factor < high_freq_factor, got " +
        to_mp(low_freq_factor).str() + " and " + to_mp(high_freq_factor).str());
  }
  std::vector<T> inv = rope_inv_freq(rotary_dims, base);
  const T length = from_mp<T>(mp(original_context));
  const T low_freq_wavelength = length / low_freq_factor;
  const T high_freq_wavelength = length / high_freq_factor;
  const T two_pi = T(2) * pi<T>();
  for (T& theta : inv) {
    const T wavelength = two_pi / theta;
    if (wavelength < high_freq_wavelength) continue;
    if (wavelength > low_freq_wavelength) {
      theta = theta / factor;
      continue;
    }
    const T smooth =
        T(T(T(length / wavelength) - low_freq_factor) / T(high_freq_factor - low_freq_factor));
    theta = T(T(T(1) - smooth) * T(theta / factor)) + T(smooth * theta);
  }
  return inv;
}

}  // namespace lmo::ref
