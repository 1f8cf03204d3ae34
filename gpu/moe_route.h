// F20 routing of one token (reference/moe.h route) as __host__ __device__ code, so that a host
// test (tests/kernels/gpu_moe_route_math_test.cc) checks the GPU kernel's very code against the exact
// reference on a machine without a device. Plain C++ when not compiled by nvcc; no CUDA header.
//
// Steps, as the reference's: affinities s_i (the overflow-free sigmoid, or softmax over the row
// with its maximum subtracted); selection scores s_i + c_i (the balancing bias, selection only);
// with n_group > 1 a group score per group (the sum of its two best selection scores, or its
// best) and the topk_group best groups kept; the top_k best selection scores among the experts of
// the kept groups; gates from the unbiased affinities, s_i / Σ_selected s_j (ascending expert
// order) or s_i, times routed_scale. Everything in double; the caller rounds each gate once to
// f32 and then to its storage.
//
// Ranking (top-k and top groups) is the reference's strict total order: larger score first, on
// equal scores the lower index, a NaN above every number, NaNs among themselves by index. Since
// it is a total order, the k best are found without sorting or scratch memory: round r picks the
// best item that ranks after round r − 1's pick, and after K rounds the K-th pick is a cut:
// an item is selected iff it does not rank after the cut. The affinities and scores are
// recomputed where needed (pure functions of the row: the same bits every time), so a token needs
// only a few scalars, whatever N. Cost O((K + topk_group)·N) score evaluations per token, which
// is small for routers (N ≤ a few hundred, K ≤ 16).
//
// Special values follow from IEEE double arithmetic in the reference's order: a NaN logit gives
// a NaN affinity (sigmoid) or a NaN row (softmax: the maximum is NaN), a +inf or an all −inf row
// gives a NaN softmax row (∞ − ∞), a −inf beside a finite maximum gives 0.
#pragma once

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define LMO_HD __host__ __device__
#else
#define LMO_HD
#endif

namespace lmo::gpu::moe {

// The routing configuration (fast::RouterConfig's meaning, in plain values for a kernel).
struct RouteShape {
  int64_t experts = 1;  // N
  int64_t top_k = 1;    // K
  int64_t n_group = 1;  // 1: no group limit
  int64_t topk_group = 1;
  bool softmax = false;    // affinities by softmax over the row; false: sigmoid
  bool group_max = false;  // a group's score is its best; false: the sum of its two best
  bool normalize = true;   // g_i = s_i / Σ_selected s_j; false: g_i = s_i
  double routed_scale = 1;
};

// The shape of a router configuration c (kernels/api/router_config.h's fields and enumerators, which
// gpu::RouterConfig names too); topk_group is 1 without a group limit.
template <class Config>
RouteShape route_shape(const Config& c) {
  using Score = decltype(c.score);
  using Group = decltype(c.group_score);
  RouteShape sh;
  sh.experts = c.experts;
  sh.top_k = c.top_k;
  sh.n_group = c.n_group;
  sh.topk_group = c.n_group > 1 ? c.topk_group : 1;
  sh.softmax = c.score == Score::softmax;
  sh.group_max = c.group_score == Group::max;
  sh.normalize = c.normalize;
  sh.routed_scale = static_cast<double>(c.routed_scale);
  return sh;
}

LMO_HD inline bool is_nan(double v) { return v != v; }

// reference/moe.h moe_detail::ranks_before: true when (va, ia) ranks before (vb, ib).
LMO_HD inline bool ranks_before(double va, int64_t ia, double vb, int64_t ib) {
  const bool na = is_nan(va), nb = is_nan(vb);
  if (na != nb) return na;
  if (!na && va != vb) return vb < va;
  return ia < ib;
}

// reference/moe.h router_sigmoid's default form: 1/(1 + e^{−z}) for z ≥ 0 (and NaN),
// e^{z}/(1 + e^{z}) below, so that the exponential never overflows.
LMO_HD inline double router_sigmoid(double z) {
  if (!(z < 0.0)) return 1.0 / (1.0 + ::exp(-z));
  const double e = ::exp(z);
  return e / (1.0 + e);
}

// A ranked item: its score and index; index −1 for none.
struct Ranked {
  double v = 0;
  int64_t i = -1;
};

// One token's routing. Row provides, as LMO_HD const members: double logit(int64_t i) (the
// stored logit widened exactly), bool has_bias() and double bias(int64_t i).
template <class Row>
class TokenRouter {
 public:
  LMO_HD TokenRouter(const Row& row, const RouteShape& sh)
      : row_(row), sh_(sh), group_size_(sh.experts / sh.n_group) {
    if (sh_.softmax) {
      // The maximum as reference/softmax.h's row_max: NaN as soon as one is met.
      m_ = row_.logit(0);
      for (int64_t i = 1; i < sh_.experts && !is_nan(m_); ++i) {
        const double z = row_.logit(i);
        if (is_nan(z) || z > m_) m_ = z;
      }
      sum_ = 0;
      for (int64_t i = 0; i < sh_.experts; ++i) sum_ += ::exp(row_.logit(i) - m_);
    }
    if (sh_.n_group > 1) {
      for (int64_t r = 0; r < sh_.topk_group; ++r) group_cut_ = next_group(group_cut_);
    }
    for (int64_t r = 0; r < sh_.top_k; ++r) expert_cut_ = next_expert(expert_cut_);
  }

  // s_i: the unbiased affinity of expert i.
  LMO_HD double affinity(int64_t i) const {
    if (!sh_.softmax) return router_sigmoid(row_.logit(i));
    return ::exp(row_.logit(i) - m_) / sum_;
  }

  // s_i + c_i, or s_i without a bias.
  LMO_HD double selection(int64_t i) const {
    const double s = affinity(i);
    return row_.has_bias() ? s + row_.bias(i) : s;
  }

  // The score of group g: its best selection score, or the sum of its two best.
  LMO_HD double group_score(int64_t g) const {
    const int64_t begin = g * group_size_, end = begin + group_size_;
    Ranked first{selection(begin), begin}, second;
    for (int64_t i = begin + 1; i < end; ++i) {
      const double v = selection(i);
      if (ranks_before(v, i, first.v, first.i)) {
        second = first;
        first = Ranked{v, i};
      } else if (second.i < 0 || ranks_before(v, i, second.v, second.i)) {
        second = Ranked{v, i};
      }
    }
    return sh_.group_max ? first.v : first.v + second.v;
  }

  // Whether group g is among the topk_group best (always, without a group limit).
  LMO_HD bool kept(int64_t g) const {
    return sh_.n_group == 1 || !ranks_before(group_cut_.v, group_cut_.i, group_score(g), g);
  }

  // Calls out(k, i, gate) for the K selected experts i in ascending order, k = 0 … K − 1, with
  // gate = g_i · routed_scale in double.
  template <class Out>
  LMO_HD void emit(Out& out) const {
    double denom = 1;
    if (sh_.normalize) {
      denom = 0;
      for (int64_t g = 0; g < sh_.n_group; ++g) {
        if (!kept(g)) continue;
        for (int64_t i = g * group_size_; i < (g + 1) * group_size_; ++i) {
          if (selected_in_kept(i)) denom += affinity(i);
        }
      }
    }
    int64_t k = 0;
    for (int64_t g = 0; g < sh_.n_group; ++g) {
      if (!kept(g)) continue;
      for (int64_t i = g * group_size_; i < (g + 1) * group_size_; ++i) {
        if (!selected_in_kept(i)) continue;
        const double s = affinity(i);
        out(k++, i, (sh_.normalize ? s / denom : s) * sh_.routed_scale);
      }
    }
  }

 private:
  // Expert i of a kept group is selected iff it does not rank after the K-th pick.
  LMO_HD bool selected_in_kept(int64_t i) const {
    return !ranks_before(expert_cut_.v, expert_cut_.i, selection(i), i);
  }

  // The best group ranking after `after` (any group when after.i < 0).
  LMO_HD Ranked next_group(Ranked after) const {
    Ranked best;
    for (int64_t g = 0; g < sh_.n_group; ++g) {
      const double v = group_score(g);
      if (after.i >= 0 && !ranks_before(after.v, after.i, v, g)) continue;
      if (best.i < 0 || ranks_before(v, g, best.v, best.i)) best = Ranked{v, g};
    }
    return best;
  }

  // The best expert of a kept group ranking after `after`.
  LMO_HD Ranked next_expert(Ranked after) const {
    Ranked best;
    for (int64_t g = 0; g < sh_.n_group; ++g) {
      if (!kept(g)) continue;
      for (int64_t i = g * group_size_; i < (g + 1) * group_size_; ++i) {
        const double v = selection(i);
        if (after.i >= 0 && !ranks_before(after.v, after.i, v, i)) continue;
        if (best.i < 0 || ranks_before(v, i, best.v, best.i)) best = Ranked{v, i};
      }
    }
    return best;
  }

  Row row_;
  RouteShape sh_;
  int64_t group_size_;
  double m_ = 0, sum_ = 1;  // softmax: the row's maximum and Σ e^{z_i − m}
  Ranked group_cut_, expert_cut_;
};

}  // namespace lmo::gpu::moe
