// Argument checks of the MoE entry points (fast/moe_router.h and gpu/api_moe.h, which share their
// argument shapes and kernels/api/router_config.h's configuration): every violation throws
// std::invalid_argument naming the function, the parameter, its value and the expectation.
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/api/router_config.h"
#include "kernels/api/validate.h"

namespace lmo::kernels::detail {

[[noreturn]] inline void fail_moe(const char* fn, const std::string& what) {
  throw std::invalid_argument(std::string(fn) + ": " + what);
}

// What the reference's route rejects (K outside 1 … N, n_group not dividing N, topk_group
// outside 1 … n_group, a top-2-sum group score on groups of one expert, K beyond the experts of
// the kept groups), unknown enumerators, N ≥ 2^31, and a routed_scale that is not finite.
inline void check_router_config(const char* fn, const RouterConfig& c) {
  using Score = RouterScore;
  using Group = GroupScore;
  const int64_t n = c.experts;
  check_count(fn, "experts", n, 1);
  if (n > (int64_t{1} << 31) - 1) {
    fail_moe(fn, "experts is " + std::to_string(n) + ", expected < 2^31");
  }
  if (c.top_k < 1 || c.top_k > n) {
    fail_moe(fn, "top_k is " + std::to_string(c.top_k) + ", expected 1 … N = " + std::to_string(n));
  }
  if (c.score != Score::sigmoid && c.score != Score::softmax) {
    fail_moe(fn, "score is " + std::to_string(static_cast<int>(c.score)) +
                     ", expected sigmoid or softmax");
  }
  if (c.n_group < 1 || n % c.n_group != 0) {
    fail_moe(fn, "n_group is " + std::to_string(c.n_group) +
                     ", expected a divisor of N = " + std::to_string(n));
  }
  if (c.n_group > 1) {
    const int64_t gs = n / c.n_group;
    if (c.topk_group < 1 || c.topk_group > c.n_group) {
      fail_moe(fn, "topk_group is " + std::to_string(c.topk_group) +
                       ", expected 1 … n_group = " + std::to_string(c.n_group));
    }
    if (c.group_score != Group::top2_sum && c.group_score != Group::max) {
      fail_moe(fn, "group_score is " + std::to_string(static_cast<int>(c.group_score)) +
                       ", expected top2_sum or max");
    }
    if (c.group_score == Group::top2_sum && gs < 2) {
      fail_moe(fn, "the group size N / n_group is " + std::to_string(gs) +
                       ", expected at least 2 for the top-2-sum group score");
    }
    if (c.top_k > c.topk_group * gs) {
      fail_moe(fn, "top_k is " + std::to_string(c.top_k) + ", expected at most the " +
                       std::to_string(c.topk_group * gs) + " experts of the kept groups");
    }
  }
  if (!std::isfinite(c.routed_scale)) {
    fail_moe(fn, "routed_scale is " + std::to_string(c.routed_scale) + ", expected a finite value");
  }
}

// expert_balance's sizes and pointers: tokens ≥ 1, N ≥ 1, top_k in 1 … N, no null pointer.
inline void check_balance_args(const char* fn, int64_t tokens, int64_t n_experts, int64_t top_k,
                               const int64_t* experts, const float* affinities,
                               const int64_t* counts, const float* p) {
  check_count(fn, "tokens", tokens, 1);
  check_count(fn, "n_experts", n_experts, 1);
  if (top_k < 1 || top_k > n_experts) {
    fail_moe(fn, "top_k is " + std::to_string(top_k) +
                     ", expected 1 … N = " + std::to_string(n_experts));
  }
  check_ptr(fn, "experts", experts, true);
  check_ptr(fn, "affinities", affinities, true);
  check_ptr(fn, "counts", counts, true);
  check_ptr(fn, "p", p, true);
}

// Every token's top_k selections (experts [tokens, top_k]) distinct and in 0 … N − 1.
inline void check_selections(const char* fn, const int64_t* experts, int64_t tokens,
                             int64_t n_experts, int64_t top_k) {
  // last[i]: the last token that selected i, to catch a repeat within a token.
  std::vector<int64_t> last(static_cast<size_t>(n_experts), -1);
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t k = 0; k < top_k; ++k) {
      const int64_t e = experts[t * top_k + k];
      if (e < 0 || e >= n_experts || last[static_cast<size_t>(e)] == t) {
        fail_moe(fn, "token " + std::to_string(t) + " selects expert " + std::to_string(e) +
                         ": expected distinct experts in 0 … " + std::to_string(n_experts - 1));
      }
      last[static_cast<size_t>(e)] = t;
    }
  }
}

// load_balance_loss's arguments: tokens, N, top_k ≥ 1, no null pointer, a finite α.
inline void check_loss_args(const char* fn, const int64_t* counts, const float* p, int64_t tokens,
                            int64_t n_experts, int64_t top_k, float alpha) {
  check_count(fn, "tokens", tokens, 1);
  check_count(fn, "n_experts", n_experts, 1);
  check_count(fn, "top_k", top_k, 1);
  check_ptr(fn, "counts", counts, true);
  check_ptr(fn, "p", p, true);
  if (!std::isfinite(alpha)) {
    fail_moe(fn, "alpha is " + std::to_string(alpha) + ", expected a finite value");
  }
}

// aux_free_update's arguments other than the storage: n ≥ 1, no null pointer, a finite γ, and
// loads ≥ 0 whose total stays at most 2^62 / n, so that n·load_i and Σ load compare exactly in
// int64. Returns Σ load.
inline int64_t checked_load_total(const char* fn, const void* bias, const int64_t* load, int64_t n,
                                  float gamma, const void* new_bias) {
  check_count(fn, "n", n, 1);
  check_ptr(fn, "bias", bias, true);
  check_ptr(fn, "load", load, true);
  check_ptr(fn, "new_bias", new_bias, true);
  if (!std::isfinite(gamma)) {
    fail_moe(fn, "gamma is " + std::to_string(gamma) + ", expected a finite value");
  }
  const int64_t limit = (int64_t{1} << 62) / n;
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (load[i] < 0 || load[i] > limit - total) {
      fail_moe(fn, "load[" + std::to_string(i) + "] is " + std::to_string(load[i]) +
                       ", expected a count >= 0 with a total of at most 2^62 / N");
    }
    total += load[i];
  }
  return total;
}

}  // namespace lmo::kernels::detail
