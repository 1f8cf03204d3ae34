// gpu/api_positional.h on top of gpu/launch_positional.h: validate as fast/ does
// (kernels/api/validate.h, kernels/api/validate_positional.h), form what the kernels need on the host (the
// sinusoidal frequencies in turns, kernels/api/turns.h; T5's bucket thresholds, kernels::T5Buckets), copy,
// launch, wait, copy back.
#include "gpu/api_positional.h"

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/api/t5_buckets.h"
#include "kernels/api/turns.h"
#include "kernels/api/validate.h"
#include "kernels/api/validate_positional.h"
#include "gpu/host_call.h"
#include "gpu/launch_positional.h"

namespace lmo::gpu {

void sinusoidal_pe(Storage s, const int64_t* positions, void* pe, int64_t tokens, int64_t d,
                   double base) {
  constexpr const char* fn = "gpu::sinusoidal_pe";
  detail::check_storage(fn, s);
  kernels::detail::check_sinusoidal_pe(fn, positions, pe, tokens, d, base);
  if (tokens == 0) return;
  const size_t half = static_cast<size_t>(d / 2);
  const kernels::Turns turns = kernels::turns_of(kernels::inverse_powers(base, d / 2, d));
  detail::Call call(fn);
  const auto* dp = static_cast<const int64_t*>(
      call.upload(positions, static_cast<size_t>(tokens) * sizeof(int64_t)));
  const auto* dhi = static_cast<const double*>(call.upload(turns.hi.data(), half * sizeof(double)));
  const auto* dlo = static_cast<const double*>(call.upload(turns.lo.data(), half * sizeof(double)));
  void* dpe = call.alloc(detail::bytes_of(s, tokens * d));
  call.run([=] { return launch_sinusoidal_pe(s, dp, dhi, dlo, dpe, tokens, d, nullptr); });
  call.download(pe, dpe, detail::bytes_of(s, tokens * d));
  call.finish();
}

void learned_position(Storage s, const void* token_table, int64_t vocab, const void* position_table,
                      int64_t max_positions, const int64_t* token_ids, const int64_t* positions,
                      void* h, int64_t tokens, int64_t d) {
  constexpr const char* fn = "gpu::learned_position";
  detail::check_storage(fn, s);
  kernels::detail::check_learned_position(fn, token_table, vocab, position_table, max_positions,
                                       token_ids, positions, h, tokens, d);
  if (tokens == 0) return;
  const size_t index_bytes = static_cast<size_t>(tokens) * sizeof(int64_t);
  detail::Call call(fn);
  const void* dv = call.upload(token_table, detail::bytes_of(s, vocab * d));
  const void* du = call.upload(position_table, detail::bytes_of(s, max_positions * d));
  const auto* dids = static_cast<const int64_t*>(call.upload(token_ids, index_bytes));
  const auto* dpos = static_cast<const int64_t*>(call.upload(positions, index_bytes));
  void* dh = call.alloc(detail::bytes_of(s, tokens * d));
  call.run([=] { return launch_learned_position(s, dv, du, dids, dpos, dh, tokens, d, nullptr); });
  call.download(h, dh, detail::bytes_of(s, tokens * d));
  call.finish();
}

void shaw_logits(Storage s, const void* q, const void* k, const void* rel_k, void* e, int64_t n_q,
                 int64_t n_k, int64_t d_k, int64_t max_relative_position) {
  constexpr const char* fn = "gpu::shaw_logits";
  detail::check_storage(fn, s);
  kernels::detail::check_shaw_logits(fn, q, k, rel_k, e, n_q, n_k, d_k, max_relative_position);
  if (n_q == 0 || n_k == 0) return;
  detail::Call call(fn);
  const void* dq = call.upload(q, detail::bytes_of(s, n_q * d_k));
  const void* dk = call.upload(k, detail::bytes_of(s, n_k * d_k));
  const void* drel = call.upload(rel_k, detail::bytes_of(s, (2 * max_relative_position + 1) * d_k));
  void* de = call.alloc(detail::bytes_of(s, n_q * n_k));
  call.run([=] {
    return launch_shaw_logits(s, dq, dk, drel, de, n_q, n_k, d_k, max_relative_position, nullptr);
  });
  call.download(e, de, detail::bytes_of(s, n_q * n_k));
  call.finish();
}

void t5_bias(Storage s, const void* table, void* bias, const T5BiasShape& shape) {
  constexpr const char* fn = "gpu::t5_bias";
  detail::check_storage(fn, s);
  kernels::detail::check_t5_bias_shape(fn, shape);
  // kernels::T5Buckets checks the bucket parameters under fast's name: rethrown under this one.
  std::vector<int64_t> thresholds;
  try {
    thresholds =
        kernels::T5Buckets(shape.num_buckets, shape.max_distance, shape.bidirectional).thresholds();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("gpu::") + e.what());
  }
  const bool any = shape.query_len > 0 && shape.key_len > 0;
  kernels::detail::check_ptr(fn, "table", table, any);
  kernels::detail::check_ptr(fn, "bias", bias, any);
  if (!any) return;
  relpos::T5Rule rule;
  rule.bidirectional = shape.bidirectional;
  rule.buckets = shape.bidirectional ? shape.num_buckets / 2 : shape.num_buckets;
  rule.max_exact = rule.buckets / 2;
  rule.max_distance = shape.max_distance;
  rule.count = static_cast<int64_t>(thresholds.size());
  const int64_t out = shape.heads * shape.query_len * shape.key_len;
  detail::Call call(fn);
  const void* dtable = call.upload(table, detail::bytes_of(s, shape.num_buckets * shape.heads));
  // At least one element, so that the device pointer is valid when there is no threshold.
  thresholds.resize(thresholds.size() + 1);
  rule.thresholds = static_cast<const int64_t*>(
      call.upload(thresholds.data(), thresholds.size() * sizeof(int64_t)));
  void* dbias = call.alloc(detail::bytes_of(s, out));
  call.run([=] {
    return launch_t5_bias(s, dtable, dbias, rule, shape.heads, shape.query_len, shape.key_len,
                          shape.query_offset, nullptr);
  });
  call.download(bias, dbias, detail::bytes_of(s, out));
  call.finish();
}

}  // namespace lmo::gpu
