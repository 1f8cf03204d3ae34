// gpu/api_moe.h on top of gpu/launch_moe.h: validate as fast/moe_router.cc does
// (kernels/api/validate_moe.h), copy the inputs to the device, launch, wait, copy the outputs back.
#include "gpu/api_moe.h"

#include <cstddef>

#include "gpu/api_checks.h"
#include "gpu/host_call.h"
#include "gpu/launch_moe.h"
#include "kernels/api/validate_ffn.h"
#include "kernels/api/validate_moe.h"

namespace lmo::gpu {
namespace {

size_t bytes_of_i64(int64_t count) { return static_cast<size_t>(count) * sizeof(int64_t); }
size_t bytes_of_f32(int64_t count) { return static_cast<size_t>(count) * sizeof(float); }

}  // namespace

void moe_router(Storage s, const void* logits, const void* bias, int64_t tokens,
                const RouterConfig& cfg, int64_t* experts, void* gates, float* affinities) {
  constexpr const char* fn = "gpu::moe_router";
  detail::check_storage(fn, s);
  kernels::detail::check_count(fn, "tokens", tokens, 0);
  kernels::detail::check_router_config(fn, cfg);
  detail::check_ptrs(fn, tokens > 0, {{"logits", logits}, {"experts", experts}, {"gates", gates}});
  if (tokens == 0) return;
  const int64_t n = cfg.experts, k = cfg.top_k;
  detail::Call call(fn);
  const void* dz = call.upload(logits, detail::bytes_of(s, tokens * n));
  const void* db = bias ? call.upload(bias, detail::bytes_of(s, n)) : nullptr;
  auto* de = static_cast<int64_t*>(call.alloc(bytes_of_i64(tokens * k)));
  void* dg = call.alloc(detail::bytes_of(s, tokens * k));
  auto* da = affinities ? static_cast<float*>(call.alloc(bytes_of_f32(tokens * n))) : nullptr;
  call.run([=] {
    return launch_moe_router(s, dz, db, tokens, moe::route_shape(cfg), de, dg, da, nullptr);
  });
  call.download(experts, de, bytes_of_i64(tokens * k));
  call.download(gates, dg, detail::bytes_of(s, tokens * k));
  if (affinities) call.download(affinities, da, bytes_of_f32(tokens * n));
  call.finish();
}

void expert_balance(int64_t tokens, int64_t n_experts, int64_t top_k, const int64_t* experts,
                    const float* affinities, bool normalize_affinities, int64_t* counts, float* p) {
  constexpr const char* fn = "gpu::expert_balance";
  kernels::detail::check_balance_args(fn, tokens, n_experts, top_k, experts, affinities, counts, p);
  kernels::detail::check_selections(fn, experts, tokens, n_experts, top_k);
  detail::Call call(fn);
  const auto* de = static_cast<const int64_t*>(call.upload(experts, bytes_of_i64(tokens * top_k)));
  const auto* da =
      static_cast<const float*>(call.upload(affinities, bytes_of_f32(tokens * n_experts)));
  auto* dt = normalize_affinities
                 ? static_cast<double*>(call.alloc(static_cast<size_t>(tokens) * sizeof(double)))
                 : nullptr;
  auto* dc = static_cast<int64_t*>(call.alloc(bytes_of_i64(n_experts)));
  auto* dp = static_cast<float*>(call.alloc(bytes_of_f32(n_experts)));
  call.run([=] {
    return launch_expert_balance(tokens, n_experts, top_k, de, da, normalize_affinities, dt, dc, dp,
                                 nullptr);
  });
  call.download(counts, dc, bytes_of_i64(n_experts));
  call.download(p, dp, bytes_of_f32(n_experts));
  call.finish();
}

float load_balance_loss(const int64_t* counts, const float* p, int64_t tokens, int64_t n_experts,
                        int64_t top_k, float alpha) {
  constexpr const char* fn = "gpu::load_balance_loss";
  kernels::detail::check_loss_args(fn, counts, p, tokens, n_experts, top_k, alpha);
  detail::Call call(fn);
  const auto* dc = static_cast<const int64_t*>(call.upload(counts, bytes_of_i64(n_experts)));
  const auto* dp = static_cast<const float*>(call.upload(p, bytes_of_f32(n_experts)));
  auto* dl = static_cast<float*>(call.alloc(sizeof(float)));
  call.run([=] {
    return launch_load_balance_loss(dc, dp, tokens, n_experts, top_k, alpha, dl, nullptr);
  });
  float loss = 0;
  call.download(&loss, dl, sizeof(float));
  call.finish();
  return loss;
}

void aux_free_update(Storage s, const void* bias, const int64_t* load, int64_t n, float gamma,
                     void* new_bias) {
  constexpr const char* fn = "gpu::aux_free_update";
  detail::check_storage(fn, s);
  const int64_t total = kernels::detail::checked_load_total(fn, bias, load, n, gamma, new_bias);
  detail::Call call(fn);
  const void* dc = call.upload(bias, detail::bytes_of(s, n));
  const auto* dl = static_cast<const int64_t*>(call.upload(load, bytes_of_i64(n)));
  void* dn = call.alloc(detail::bytes_of(s, n));
  call.run([=] { return launch_aux_free_update(s, dc, dl, n, total, gamma, dn, nullptr); });
  call.download(new_bias, dn, detail::bytes_of(s, n));
  call.finish();
}

void moe_layer(Activation act, Storage s, const void* x, const void* router, const void* bias,
               int64_t tokens, const RouterConfig& cfg, int64_t d, int64_t d_ff, const void* w,
               const void* v, const void* w2, int64_t shared, const void* ws, const void* vs,
               const void* w2s, bool residual, void* y) {
  constexpr const char* fn = "gpu::moe_layer";
  detail::check_activation(fn, act);
  detail::check_storage(fn, s);
  kernels::detail::check_router_config(fn, cfg);
  kernels::detail::check_ffn_shape(fn, x, "w", w, w2, y, tokens, d, d_ff);
  kernels::detail::check_count(fn, "shared", shared, 0);
  detail::check_ptrs(fn, tokens > 0, {{"router", router}, {"v", v}});
  detail::check_ptrs(fn, tokens > 0 && shared > 0, {{"ws", ws}, {"vs", vs}, {"w2s", w2s}});
  if (tokens == 0) return;
  const int64_t n = cfg.experts, k = cfg.top_k;
  detail::Call call(fn);
  MoeLayerBuffers b;
  b.x = call.upload(x, detail::bytes_of(s, tokens * d));
  b.router = call.upload(router, detail::bytes_of(s, d * n));
  if (bias) {
    b.bias = call.upload(bias, detail::bytes_of(s, n));
    b.bias_f32 = static_cast<float*>(call.alloc(bytes_of_f32(n)));
  }
  b.w = call.upload(w, detail::bytes_of(s, n * d * d_ff));
  b.v = call.upload(v, detail::bytes_of(s, n * d * d_ff));
  b.w2 = call.upload(w2, detail::bytes_of(s, n * d_ff * d));
  if (shared > 0) {
    b.ws = call.upload(ws, detail::bytes_of(s, shared * d * d_ff));
    b.vs = call.upload(vs, detail::bytes_of(s, shared * d * d_ff));
    b.w2s = call.upload(w2s, detail::bytes_of(s, shared * d_ff * d));
  }
  b.logits = static_cast<float*>(call.alloc(bytes_of_f32(tokens * n)));
  b.experts = static_cast<int64_t*>(call.alloc(bytes_of_i64(tokens * k)));
  b.gates = static_cast<float*>(call.alloc(bytes_of_f32(tokens * k)));
  b.hidden = static_cast<float*>(call.alloc(bytes_of_f32(tokens * (shared + k) * d_ff)));
  b.y = call.alloc(detail::bytes_of(s, tokens * d));
  MoeLayerShape sh;
  sh.tokens = tokens;
  sh.d = d;
  sh.d_ff = d_ff;
  sh.shared = shared;
  sh.residual = residual;
  sh.route = moe::route_shape(cfg);
  call.run([=] { return launch_moe_layer(act, s, b, sh, nullptr); });
  call.download(y, b.y, detail::bytes_of(s, tokens * d));
  call.finish();
}

}  // namespace lmo::gpu
