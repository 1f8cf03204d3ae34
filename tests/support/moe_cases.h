// The MoE router configurations and inputs the fast and GPU router tests share: DeepSeek-V3
// (sigmoid, bias, 8 groups by top-2 sums, top-4 groups, top-8, scale 2.5), DeepSeek-V2 (softmax,
// groups by their best, no renormalization), routers without a group limit (Switch, Mixtral, a
// biased sigmoid router), logits drawn N(0, logit_std) with special values placed, and logits
// with many exact ties (integers, a bias of 0 or 1/2).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "fast/storage.h"
#include "oracle/guarded_buffer.h"
#include "oracle/inputs.h"
#include "oracle/ops/moe.h"
#include "oracle/specials.h"
#include "tests/support/fast_cases.h"

namespace lmo::testdata {

// A configuration under test and the inputs drawn for it.
struct Routed {
  oracle::RouterParams p;
  oracle::InputSet in;
};

// The routings of oracle/ops/moe.h's cases (cases/moe.json) at a chosen token count.
inline oracle::RouterParams deepseek_v3(int64_t tokens) {
  return {.tokens = tokens,
          .experts = 256,
          .top_k = 8,
          .score = ref::RouterScore::kSigmoid,
          .n_group = 8,
          .topk_group = 4,
          .group_score = ref::GroupScore::kTopTwoSum,
          .routed_scale = 2.5,
          .bias = true,
          .logit_std = 2,
          .alpha = 1e-4};
}

inline oracle::RouterParams deepseek_v2(int64_t tokens) {
  return {.tokens = tokens,
          .experts = 160,
          .top_k = 6,
          .score = ref::RouterScore::kSoftmax,
          .n_group = 8,
          .topk_group = 3,
          .group_score = ref::GroupScore::kMax,
          .normalize = false,
          .routed_scale = 16,
          .logit_std = 2,
          .alpha = 3e-3};
}

// No group limit (Switch, Mixtral, a biased sigmoid router).
inline oracle::RouterParams flat_router(int64_t tokens, int64_t experts, int64_t k,
                                        ref::RouterScore score, bool normalize, bool bias = false) {
  return {.tokens = tokens,
          .experts = experts,
          .top_k = k,
          .score = score,
          .normalize = normalize,
          .bias = bias,
          .alpha = 1e-2};
}

// Logits N(0, logit_std) (with specials placed) and the bias N(0, bias_std), in storage s.
inline Routed draw_router(const oracle::RouterParams& p, fast::Storage s, uint64_t seed,
                          const std::vector<oracle::SpecialAt>& specials = {}) {
  Routed r{p, {}};
  ref::Tensor z = fast_normal(seed, "logits", s, {p.tokens, p.experts}, 0.0, p.logit_std);
  oracle::place_specials(z, specials);
  r.in.add("logits", std::move(z));
  if (p.bias) r.in.add("bias", fast_normal(seed, "bias", s, {p.experts}, 0.0, p.bias_std));
  return r;
}

// Logits and bias with many exactly equal scores: integer logits in [−2, 2] and a bias of 0 or
// 1/2 (equal (z, c) pairs give equal f32 scores; distinct ones differ far beyond f32 errors), so
// the selection must follow the reference's tie rule exactly, groups included.
inline Routed tied_router(const oracle::RouterParams& p, fast::Storage s, uint64_t seed) {
  Routed r{p, {}};
  const ref::Tensor zi =
      oracle::uniform_int(seed, "z", ref::DType::i64, {p.tokens, p.experts}, -2, 3);
  ref::Tensor z(dtype_of(s), {p.tokens, p.experts});
  for (int64_t i = 0; i < z.numel(); ++i) z.set(i, static_cast<double>(zi.as<int64_t>()[i]));
  r.in.add("logits", std::move(z));
  if (p.bias) {
    const ref::Tensor ci = oracle::uniform_int(seed, "c", ref::DType::i64, {p.experts}, 0, 2);
    ref::Tensor c(dtype_of(s), {p.experts});
    for (int64_t i = 0; i < c.numel(); ++i)
      c.set(i, 0.5 * static_cast<double>(ci.as<int64_t>()[i]));
    r.in.add("bias", std::move(c));
  }
  return r;
}

// The special logits of the router tests, with the configuration each is placed in: sigmoid
// (a NaN ranks first and makes its token's gates NaN; ±inf are affinities 1 and 0), softmax (a
// NaN or +inf makes a row NaN, ranked by index; a −inf is a masked expert), and a softmax row of
// only −inf (NaN).
inline std::vector<std::pair<std::string, Routed>> special_routers(fast::Storage s) {
  using oracle::Special;
  std::vector<std::pair<std::string, Routed>> out;
  out.emplace_back("sigmoid specials", draw_router(deepseek_v3(4), s, 515,
                                                   {{3, Special::nan},
                                                    {256 + 40, Special::pos_inf},
                                                    {256 + 41, Special::pos_inf},
                                                    {512 + 7, Special::neg_inf},
                                                    {768 + 200, Special::max_finite}}));
  out.emplace_back("softmax specials", draw_router(deepseek_v2(4), s, 516,
                                                   {{5, Special::nan},
                                                    {160 + 9, Special::pos_inf},
                                                    {320 + 0, Special::neg_inf},
                                                    {320 + 1, Special::neg_inf}}));
  std::vector<oracle::SpecialAt> masked;
  for (int64_t i = 0; i < 5; ++i) masked.push_back({5 + i, Special::neg_inf});
  out.emplace_back(
      "softmax row of −inf",
      draw_router(flat_router(2, 5, 2, ref::RouterScore::kSoftmax, true), s, 517, masked));
  return out;
}

inline const void* input_bytes(const oracle::InputSet& in, const char* name) {
  return in.at(name).bytes().data();
}
inline const void* bias_of(const Routed& r) {
  return r.p.bias ? input_bytes(r.in, "bias") : nullptr;
}

inline std::vector<int64_t> indices_of(const oracle::GuardedBuffer& b) {
  const auto* p = static_cast<const int64_t*>(b.data());
  return std::vector<int64_t>(p, p + b.nbytes() / sizeof(int64_t));
}

}  // namespace lmo::testdata
