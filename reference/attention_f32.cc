#include "reference/attention_f32.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cfloat>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "reference/attention.h"
#include "reference/fma_clones.h"
#include "reference/parallel.h"

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace lmo::ref {
namespace {

using F32 = Sim<Format::f32>;
static_assert(sizeof(F32) == sizeof(float) && std::is_trivially_copyable_v<F32>,
              "a Mat<Sim<f32>> is read as the float patterns it holds");

std::atomic<bool> g_native{true};

// Eight floats, one per key (logits) or per output component (P·V): GCC and Clang lower the
// element-wise operators to AVX in the Haswell clone and to SSE pairs in the baseline one; each
// lane is one IEEE operation either way.
using V8 = float __attribute__((vector_size(32)));
constexpr int64_t kLanes = 8;
// Keys per logit block: eight independent chains hide the adder's latency.
constexpr int64_t kKeyBlock = 8 * kLanes;
// Output components per P·V pass: eight accumulators, the broadcast and a load fit the 16
// vector registers.
constexpr int64_t kComponentBlock = 8 * kLanes;

// Whether this thread's float operations are IEEE's: MXCSR round to nearest (bits 13–14 clear),
// no flush-to-zero (bit 15) and no denormals-are-zero (bit 6). Read per row: the mode is per
// thread and a library may have changed it in a worker.
bool ieee_float_mode() {
#if defined(__x86_64__) && FLT_EVAL_METHOD == 0
  return (_mm_getcsr() & 0xE040u) == 0;
#else
  return false;
#endif
}

float as_float(F32 x) { return std::bit_cast<float>(x.bits()); }
F32 as_sim(float x) {
  // A NaN's payload is the hardware's; Sim's are canonical (encode: nan_bits).
  if (x != x) return std::numeric_limits<F32>::quiet_NaN();
  return F32::from_bits(std::bit_cast<uint32_t>(x));
}

// Unaligned loads and stores (by reference: a vector passed by value would depend on the clone's
// instruction set for its calling convention).
void load8(V8& v, const float* p) { std::memcpy(&v, p, sizeof v); }
void store8(float* p, const V8& v) { std::memcpy(p, &v, sizeof v); }

// kKeyBlock dot products q·k_j of width d, keys j side by side in `kt` (row c holds component c
// of every key, `ld` apart), each summed left to right from +0 with the product rounded first.
LMO_FMA_CLONES void key_block_dots(const float* q, const float* kt, int64_t ld, int64_t d,
                                   float* dots) {
  V8 a[8] = {};
  for (int64_t c = 0; c < d; ++c) {
    const V8 qc = V8{} + q[c];
    const float* row = kt + c * ld;
    for (int m = 0; m < 8; ++m) {
      V8 k;
      load8(k, row + m * kLanes);
      a[m] = a[m] + qc * k;
    }
  }
  for (int m = 0; m < 8; ++m) store8(dots + m * kLanes, a[m]);
}

// out[c] = Σ_j p_j · v_j[c] over the visible keys in order, for kComponentBlock components
// from `col` (v rows `ld` apart); pv_lanes the same for kLanes components.
LMO_FMA_CLONES void pv_block(std::span<const int64_t> keys, const float* p, const float* v,
                             int64_t ld, int64_t col, float* out) {
  V8 a[8] = {};
  for (const int64_t j : keys) {
    const V8 pj = V8{} + p[j];
    const float* row = v + j * ld + col;
    for (int m = 0; m < 8; ++m) {
      V8 vj;
      load8(vj, row + m * kLanes);
      a[m] = a[m] + pj * vj;
    }
  }
  for (int m = 0; m < 8; ++m) store8(out + m * kLanes, a[m]);
}
LMO_FMA_CLONES void pv_lanes(std::span<const int64_t> keys, const float* p, const float* v,
                             int64_t ld, int64_t col, float* out) {
  V8 a = {};
  for (const int64_t j : keys) {
    V8 vj;
    load8(vj, v + j * ld + col);
    a = a + (V8{} + p[j]) * vj;
  }
  store8(out, a);
}

// One query row of one head, as attention_row_logits and attention_row_output compute it.
struct RowKernel {
  const Mat<F32>& q;
  const AttentionConfig& cfg;
  int64_t t_k;
  const std::vector<float>& kt;  // per KV head: d rows of ld floats (keys transposed, 0-padded)
  int64_t ld;
  const std::vector<float>& vf;  // per KV head: V's T_k rows of d_v floats, contiguous
  float scale;
  std::optional<F32> cap;  // the logit soft cap, as attention_cap gives it

  void operator()(int64_t i, int64_t head, std::span<F32> o) const {
    const int64_t d = cfg.head_dim, dv = cfg.v_dim(), kv = kv_head_of(head, cfg);
    std::vector<int64_t> keys;
    for (int64_t j = 0; j < t_k; ++j) {
      if (attention_key_visible(cfg, q.rows, t_k, i, j)) keys.push_back(j);
    }
    if (keys.empty()) {  // 0/0: every component NaN (attention.h)
      std::fill(o.begin(), o.end(), std::numeric_limits<F32>::quiet_NaN());
      return;
    }
    std::vector<float> qi(static_cast<size_t>(d));
    for (int64_t c = 0; c < d; ++c) qi[static_cast<size_t>(c)] = as_float(q(i, head * d + c));
    // Logits of the blocks spanning the visible keys (padding and hidden keys computed, unused).
    std::vector<float> s(static_cast<size_t>(ld));
    const float* kth = kt.data() + kv * d * ld;
    for (int64_t j0 = keys.front() / kKeyBlock * kKeyBlock; j0 <= keys.back(); j0 += kKeyBlock) {
      key_block_dots(qi.data(), kth + j0, ld, d, s.data() + j0);
    }
    // masked_softmax_parts: m the first visible logit or a larger one, e_j = exp(s_j − m)
    // correctly rounded (Sim's exp), z their sum left to right; then p_j = e_j / z.
    float m = 0;
    bool first = true;
    const bool biased = !cfg.logit_bias.empty();
    for (const int64_t j : keys) {
      float& sj = s[static_cast<size_t>(j)];
      sj = sj * scale;
      if (cap || biased) {
        // attention_row_logits' finish: the soft cap, then the bias, in Sim's own operations
        // (the cap's tanh correctly rounded, as on every other path).
        F32 t = soft_cap_logit(as_sim(sj), cap);
        if (biased) t = t + attention_logit_bias<F32>(cfg, i, j, head);
        sj = as_float(t);
      }
      if (cfg.subtract_max && (first || sj > m)) m = sj;
      first = false;
    }
    float z = 0;
    for (const int64_t j : keys) {
      float& e = s[static_cast<size_t>(j)];
      e = as_float(exp(F32::from_bits(std::bit_cast<uint32_t>(e - m))));
      z = z + e;
    }
    for (const int64_t j : keys) s[static_cast<size_t>(j)] = s[static_cast<size_t>(j)] / z;
    // P·V: blocks of components, then vectors of them, then one component at a time.
    const float* vh = vf.data() + kv * t_k * dv;
    float acc[kComponentBlock];
    int64_t c0 = 0;
    const auto store = [&](int64_t n) {
      for (int64_t c = 0; c < n; ++c) o[static_cast<size_t>(c0 + c)] = as_sim(acc[c]);
      c0 += n;
    };
    while (c0 + kComponentBlock <= dv) {
      pv_block(keys, s.data(), vh, dv, c0, acc);
      store(kComponentBlock);
    }
    while (c0 + kLanes <= dv) {
      pv_lanes(keys, s.data(), vh, dv, c0, acc);
      store(kLanes);
    }
    for (; c0 < dv; ++c0) {
      float a = 0;
      for (const int64_t j : keys) {
        a = a + s[static_cast<size_t>(j)] * vh[j * dv + c0];
      }
      o[static_cast<size_t>(c0)] = as_sim(a);
    }
  }
};

}  // namespace

void set_native_f32_attention_for_testing(bool on) { g_native = on; }

bool attention_f32_native(const Mat<F32>& q, const Mat<F32>& k, const Mat<F32>& v,
                          const AttentionConfig& cfg, bool contract, Mat<F32>& out) {
#if !defined(__x86_64__) || FLT_EVAL_METHOD != 0
  return false;
#endif
  if (!g_native || contract) return false;
  const int64_t d = cfg.head_dim, dv = cfg.v_dim(), g = cfg.kv_heads, t_k = k.rows;
  // Keys transposed per KV head, padded with zeros to whole blocks, and one cache line more: rows
  // a power of two apart would all fall in the same few sets of the L1 cache.
  const int64_t ld = (t_k + kKeyBlock - 1) / kKeyBlock * kKeyBlock + 16;
  std::vector<float> kt(static_cast<size_t>(g * d * ld), 0.0f);
  for (int64_t j = 0; j < t_k; ++j) {
    for (int64_t kv = 0; kv < g; ++kv) {
      for (int64_t c = 0; c < d; ++c) {
        kt[static_cast<size_t>((kv * d + c) * ld + j)] = as_float(k(j, kv * d + c));
      }
    }
  }
  // V per KV head, its rows contiguous: P·V streams them in order.
  std::vector<float> vf(v.data.size());
  for (int64_t kv = 0; kv < g; ++kv) {
    for (int64_t j = 0; j < t_k; ++j) {
      for (int64_t c = 0; c < dv; ++c) {
        vf[static_cast<size_t>((kv * t_k + j) * dv + c)] = as_float(v(j, kv * dv + c));
      }
    }
  }
  const F32 scale = attention_scale<F32>(cfg);
  const std::optional<F32> cap = attention_cap<F32>(cfg);
  const RowKernel row{q, cfg, t_k, kt, ld, vf, as_float(scale), cap};
  // Head by head, so that a thread's consecutive rows read the same keys and values from cache.
  parallel_for(q.rows * cfg.heads, [&](int64_t task) {
    const int64_t head = task / q.rows, i = task % q.rows;
    const std::span<F32> o =
        out.row(i).subspan(static_cast<size_t>(head * dv), static_cast<size_t>(dv));
    if (ieee_float_mode()) {
      row(i, head, o);
      return;
    }
    std::vector<F32> s;
    std::vector<char> vis;
    attention_row_logits<F32, F32>(q, k, cfg, scale, cap, i, head, s, vis);
    attention_row_output<F32, F32>(v, cfg, {}, false, kv_head_of(head, cfg), s, vis, o);
  });
  return true;
}

}  // namespace lmo::ref
