// The fast backend's adapters for the MoE ops: oracle/backends/moe_adapters.h on fast/moe_router.h.
#include "oracle/backends/fast_moe.h"

#include <algorithm>
#include <vector>

#include "fast/blas.h"
#include "fast/convert.h"
#include "fast/ffn.h"
#include "oracle/backends/fast_adapters.h"
#include "oracle/backends/moe_adapters.h"
#include "oracle/ops/moe_layer.h"

namespace lmo::oracle::fast_adapters {

fast::RouterConfig router_config(const RouterParams& p) {
  return op_adapters::router_config<fast::RouterConfig>(p);
}

void run_moe_router(const Op& op, fast::Storage s, const InputSet& in,
                    std::vector<GuardedBuffer>& out) {
  op_adapters::run_moe_router<FastMoe>(op, s, in, out);
}

void run_load_balance_loss(const Op& op, fast::Storage s, const InputSet& in,
                           std::vector<GuardedBuffer>& out) {
  op_adapters::run_load_balance_loss<FastMoe>(op, s, in, out);
}

void run_aux_free_update(const Op& op, fast::Storage s, const InputSet& in,
                         std::vector<GuardedBuffer>& out) {
  op_adapters::run_aux_free_update<FastMoe>(op, s, in, out);
}

namespace {

// A tensor input widened exactly to f32 (fast::convert), for kernels called in f32.
std::vector<float> f32_input(const InputSet& in, const char* name, fast::Storage s) {
  const ref::Tensor& t = in.at(name);
  std::vector<float> v(static_cast<size_t>(t.numel()));
  fast::convert(s, t.bytes().data(), fast::Storage::f32, v.data(), t.numel());
  return v;
}

}  // namespace

void run_moe_layer(const Op& op, fast::Storage s, const InputSet& in,
                   std::vector<GuardedBuffer>& out) {
  const MoeLayerParams& p = op_adapters::op_as<MoeLayerOp>(op).params();
  const RouterParams& r = p.router;
  const int64_t t = r.tokens, n = r.experts, k = r.top_k, d = p.d, ff = p.d_ff;
  // Every operand widened to f32: the layer computes in f32 and rounds once, at the store.
  const std::vector<float> x = f32_input(in, "x", s), router = f32_input(in, "router", s);
  std::vector<float> logits(static_cast<size_t>(t * n));
  fast::blas_single_threaded();
  fast::sgemm(t, n, d, 1.0f, x.data(), d, router.data(), n, false, 0.0f, logits.data(), n);
  const std::vector<float> bias = r.bias ? f32_input(in, "bias", s) : std::vector<float>{};
  std::vector<int64_t> experts(static_cast<size_t>(t * k));
  std::vector<float> gates(experts.size());
  fast::moe_router(fast::Storage::f32, logits.data(), r.bias ? bias.data() : nullptr, t,
                   router_config(r), experts.data(), gates.data(), nullptr);
  const fast::Activation act = op_adapters::activation_of<fast::Activation>(p.act);
  // y = (x +) the shared experts by index + g_i φ_i(x) by ascending expert (the reference's order
  // per element; each expert runs once over the tokens that selected it, as grouped GEMMs do).
  std::vector<float> y = p.residual ? x : std::vector<float>(x.size(), 0.0f);
  auto expert = [&](const std::vector<float>& w, const std::vector<float>& v,
                    const std::vector<float>& w2, int64_t e, const std::vector<int64_t>& rows,
                    const std::vector<float>& scale) {
    std::vector<float> xe(rows.size() * static_cast<size_t>(d)), ye(xe.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      std::copy_n(x.begin() + rows[i] * d, d, xe.begin() + static_cast<std::ptrdiff_t>(i) * d);
    }
    fast::glu_ffn(act, fast::Storage::f32, xe.data(), w.data() + e * d * ff, v.data() + e * d * ff,
                  w2.data() + e * ff * d, ye.data(), static_cast<int64_t>(rows.size()), d, ff);
    for (size_t i = 0; i < rows.size(); ++i) {
      for (int64_t j = 0; j < d; ++j) {
        y[static_cast<size_t>(rows[i] * d + j)] += scale[i] * ye[i * static_cast<size_t>(d) + j];
      }
    }
  };
  if (p.shared > 0) {
    const std::vector<float> ws = f32_input(in, "ws", s), vs = f32_input(in, "vs", s),
                             w2s = f32_input(in, "w2s", s);
    std::vector<int64_t> all(static_cast<size_t>(t));
    for (int64_t i = 0; i < t; ++i) all[static_cast<size_t>(i)] = i;
    for (int64_t e = 0; e < p.shared; ++e)
      expert(ws, vs, w2s, e, all, std::vector<float>(all.size(), 1.0f));
  }
  const std::vector<float> w = f32_input(in, "w", s), v = f32_input(in, "v", s),
                           w2 = f32_input(in, "w2", s);
  for (int64_t e = 0; e < n; ++e) {
    std::vector<int64_t> rows;
    std::vector<float> g;
    for (int64_t i = 0; i < t * k; ++i) {
      if (experts[static_cast<size_t>(i)] != e) continue;
      rows.push_back(i / k);
      g.push_back(gates[static_cast<size_t>(i)]);
    }
    if (!rows.empty()) expert(w, v, w2, e, rows, g);
  }
  op_adapters::store_floats(y, out[0]);
}

}  // namespace lmo::oracle::fast_adapters
