#include "bench/attention_workloads.h"

#include <cstdio>
#include <stdexcept>

#include "fast/attention.h"
#include "fast/convert.h"

namespace lmo::bench {
namespace {

using fast::Storage;

// n values in storage s from a fixed pattern in [-1, 1): ordinary numbers, logits of a few units.
std::vector<unsigned char> pattern(Storage s, int64_t n, uint32_t salt) {
  std::vector<float> f(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t h = (static_cast<uint32_t>(i) + salt) * 2654435761u;
    f[static_cast<size_t>(i)] = static_cast<float>(h >> 20) / 2048.0f - 1.0f;
  }
  std::vector<unsigned char> out(static_cast<size_t>(n) * fast::storage_bytes(s));
  fast::convert(Storage::f32, f.data(), s, out.data(), n);
  return out;
}

struct AttentionBuffers {
  std::vector<unsigned char> q, k, v, o;
};

// Llama-3-8B-like heads (d 128, 4 query heads per KV head), 8 query heads on 2 KV heads.
ComputeWorkload attention(Storage s, int64_t tokens) {
  const int64_t h = 8, g = 2, d = 128;
  auto b = std::make_shared<AttentionBuffers>();
  b->q = pattern(s, tokens * h * d, 1);
  b->k = pattern(s, tokens * g * d, 2);
  b->v = pattern(s, tokens * g * d, 3);
  b->o.resize(static_cast<size_t>(tokens * h * d) * fast::storage_bytes(s));
  fast::AttentionArgs a;
  a.heads = h;
  a.kv_heads = g;
  a.head_dim = d;
  a.q_len = a.kv_len = tokens;
  a.mask = fast::AttentionMask::causal;
  ComputeWorkload w;
  w.op = "attention";
  char shape[96];
  std::snprintf(shape, sizeof shape, "h%lld g%lld d%lld T%lld causal", static_cast<long long>(h),
                static_cast<long long>(g), static_cast<long long>(d),
                static_cast<long long>(tokens));
  w.shape = shape;
  w.size = tokens * (tokens + 1) / 2;
  w.flops = 4.0 * static_cast<double>(d) * static_cast<double>(h) * static_cast<double>(w.size);
  w.gemm_m = tokens, w.gemm_n = tokens, w.gemm_k = d;
  AttentionBuffers* p = b.get();
  w.run = [p, s, a] { fast::attention(s, p->q.data(), p->k.data(), p->v.data(), p->o.data(), a); };
  w.buffers = b;
  return w;
}

}  // namespace

const std::vector<std::string>& compute_workload_ops() {
  static const std::vector<std::string> ops = {"attention"};
  return ops;
}

ComputeWorkload compute_workload(const std::string& op, Storage s, int64_t tokens) {
  if (tokens < 1) throw std::invalid_argument("compute_workload: tokens must be >= 1");
  if (op == "attention") return attention(s, tokens);
  throw std::invalid_argument("compute_workload: no workload for op \"" + op + "\"");
}

}  // namespace lmo::bench
