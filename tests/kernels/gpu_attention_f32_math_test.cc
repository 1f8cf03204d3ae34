// The f32 attention kernel's arithmetic (gpu/attention_f32_math.h, gpu/attention_math.h) on the
// host, where no device is needed: gpu/attention_f32.cuh's algorithm written over the very
// functions it runs, compiled by the host compiler with -ffp-contract=off (each f32 operation
// rounded once as gpu/f32_ops.h's device intrinsics round; the explicit fmas fused as __fmaf_rn
// does), in the kernel's orders: the 32 lanes of a key's warp and their butterfly, the block's
// 256 lanes and common.cuh's tree for the chunk's maximum and sum, chunks of 256 keys, each value
// component's keys ascending. It is run as a kernel library of the backends' adapters
// (oracle/backends/attention_adapters.h: attention, attention_decode, and the paged decode's
// gather), over CUDA's stand-in library and over one that errs by the whole documented bound on
// every call (tests/support/bounded_libm.h). Against independent truth, the oracle's
// run_and_judge (the exact reference and the policy table) under the recipe the gpu backend
// declares (strict+fma):
//   - every built-in attention, attention_decode, paged_attention_decode, mla_decode and
//     paged_mla_decode case (MLA: gpu/mla.cuh's absorbed query and rotated q^R, then the two-part
//     keys), in every storage it lists; decode over 1000 cached keys (four chunks); decode over
//     5000 keys split in five ranges (flash-decoding: each range's state, then the combine), with a
//     window that empties some ranges;
//   - mutations that must be caught: P̃ rounded to e4m3 before P·V while the kernel declares
//     flash-attention (P̃ in the storage format), a chunk's accumulators not rescaled by
//     e^{m_old − m}, the soft-cap dropped, a split-KV combine that drops a range's partial.
// The butterfly's sums are plain f32 additions here, as __fadd_rn would be; the device kernel's
// f32::add is that.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/attention_f32_math.h"
#include "gpu/attention_math.h"
#include "gpu/rope_math.h"
#include "kernels/api/mla_rope_angles.h"
#include "kernels/api/validate_attention.h"
#include "oracle/backends/attention_adapters.h"
#include "oracle/backends/gpu_recipes.h"
#include "oracle/cases/case.h"
#include "oracle/ops/registry.h"
#include "tests/support/bounded_libm.h"
#include "tests/support/fast_cases.h"
#include "tests/support/float_tensors.h"
#include "tests/support/gpu_block.h"
#include "tests/support/oracle_harness.h"

namespace lmo::gpu {
namespace {

namespace block = lmo::testing::gpu_block;
using lmo::testing::for_each_library;
using lmo::testing::Harness;

enum class Mutation { kNone, kE4m3Probs, kNoRescale, kNoSoftcap, kDropPartial };

constexpr int kChunk = 256;  // gpu/attention.cuh's kChunk: one key per thread

int mask_code(kernels::AttentionMask m) {
  switch (m) {
    case kernels::AttentionMask::none:
      return attn::kNone;
    case kernels::AttentionMask::causal:
      return attn::kCausal;
    case kernels::AttentionMask::window:
      return attn::kWindow;
    case kernels::AttentionMask::document:
      return attn::kDocument;
  }
  return -1;
}

std::vector<float> widened(kernels::Storage s, const void* p, int64_t n) {
  return lmo::testing::floats_at(testdata::dtype_of(s), p, n);
}

void stored(kernels::Storage s, const std::vector<float>& v, void* p) {
  lmo::testing::store_floats(testdata::dtype_of(s), v, p);
}

float to_e4m3(float x) {
  ref::Tensor t(ref::DType::e4m3, {1});
  t.set(0, x);
  return static_cast<float>(t.get(0));
}

// warp_sum_f32's butterfly over the 32 lanes' values (every lane ends with lane 0's sum).
float butterfly(std::vector<float> lanes) {
  for (int m = attn_f32::kWarpLanes / 2; m > 0; m /= 2) {
    std::vector<float> next(lanes.size());
    for (size_t lane = 0; lane < lanes.size(); ++lane) {
      next[lane] = lanes[lane] + lanes[lane ^ size_t(m)];
    }
    lanes = next;
  }
  return lanes[0];
}

// One block's online softmax over keys [lo, hi) of one (row, head): the state it leaves.
struct RangeState {
  float m = -INFINITY;
  bool any = false;
  float l = 0.0f;
  std::vector<float> acc;
  std::vector<bool> poison;
};

// dot_lane(t, lane): the lane's fused share of q·k_t (both key parts); value(t, c): v_{t,c}.
template <class L, Mutation M, class DotLane, class Value>
RangeState range_state(const DotLane& dot_lane, const Value& value, int64_t d, int64_t p,
                       int64_t lo, int64_t hi, int mask, const int64_t* doc, float scale,
                       float cap) {
  RangeState st;
  st.acc.assign(size_t(d), 0.0f);
  st.poison.assign(size_t(d), false);
  attn::OnlineMaxOf<float, L> om;
  for (int64_t t0 = lo; t0 < hi; t0 += kChunk) {
    const int n = static_cast<int>(std::min<int64_t>(hi - t0, kChunk));
    std::vector<float> ps(kChunk, 0.0f);
    std::vector<bool> vis(kChunk, false);
    for (int j = 0; j < n; ++j) {
      const int64_t t = t0 + j;
      vis[size_t(j)] = attn::doc_visible(mask, doc, t, p);
      std::vector<float> lanes(attn_f32::kWarpLanes, 0.0f);
      if (vis[size_t(j)]) {
        for (int lane = 0; lane < attn_f32::kWarpLanes; ++lane) {
          lanes[size_t(lane)] = dot_lane(t, lane);
        }
      }
      ps[size_t(j)] = attn_f32::logit<L>(butterfly(lanes), scale, cap);
    }
    const auto mine = [&](int64_t j) { return j < n && vis[size_t(j)]; };
    const float cmax = block::tree_max(
        block::per_lane([&](int64_t j) { return mine(j) ? ps[size_t(j)] : -INFINITY; }));
    const bool cany =
        block::tree_max(block::per_lane([&](int64_t j) { return mine(j) ? 1.0f : 0.0f; })) > 0;
    float alpha = 1.0f;
    if (om.update(cmax, cany, alpha)) {
      std::vector<float> e = block::per_lane(
          [&](int64_t j) { return mine(j) ? attn_f32::weight<L>(ps[size_t(j)], om.m) : 0.0f; });
      st.l = attn_f32::rescaled(st.l, alpha, block::tree_sum(e));
      if (M == Mutation::kE4m3Probs) {
        for (float& x : e) x = to_e4m3(x);
      }
      for (int64_t c = 0; c < d; ++c) {
        const float sum = attn_f32::chunk_value_sum([&](int j) { return e[size_t(j)]; },
                                                    [&](int j) { return value(t0 + j, c); },
                                                    [&](int j) { return bool(vis[size_t(j)]); }, n);
        st.acc[size_t(c)] =
            attn_f32::rescaled(st.acc[size_t(c)], M == Mutation::kNoRescale ? 1.0f : alpha, sum);
      }
    } else if (cany && om.m == -INFINITY) {
      for (int64_t c = 0; c < d; ++c) {
        for (int j = 0; j < n; ++j) {
          if (vis[size_t(j)] && !std::isfinite(value(t0 + j, c))) {
            st.poison[size_t(c)] = true;
          }
        }
      }
    }
  }
  st.m = om.m;
  st.any = om.any;
  return st;
}

// The output row from the ranges' states: the one-block row's quotients, or the split-KV combine.
template <class L, Mutation M>
void row_output(std::vector<RangeState> states, int64_t d, float* orow) {
  if (states.size() == 1) {
    const RangeState& st = states[0];
    const bool finite = st.any && std::isfinite(st.m);
    for (int64_t c = 0; c < d; ++c) {
      orow[c] = finite && !st.poison[size_t(c)] ? f32::div(st.acc[size_t(c)], st.l) : NAN;
    }
    return;
  }
  if (M == Mutation::kDropPartial) {  // the combine forgets the last range that holds keys
    for (size_t b = states.size(); b-- > 0;) {
      if (states[b].m > -INFINITY) {
        states.erase(states.begin() + static_cast<std::ptrdiff_t>(b));
        break;
      }
    }
  }
  const auto count = static_cast<int64_t>(states.size());
  const auto state = [&](int64_t b) {
    return attn_f32::SplitState{states[size_t(b)].m, states[size_t(b)].any, states[size_t(b)].l};
  };
  float m = 0.0f;
  const bool finite = attn_f32::combined_max(state, count, m);
  const float l = attn_f32::combined_sum<L>(
      state, [&](int64_t b) { return states[size_t(b)].l; }, count, m);
  for (int64_t c = 0; c < d; ++c) {
    bool poison = false;
    for (const RangeState& st : states) poison = poison || st.poison[size_t(c)];
    const float acc = attn_f32::combined_sum<L>(
        state, [&](int64_t b) { return states[size_t(b)].acc[size_t(c)]; }, count, m);
    orow[c] = finite && !poison ? f32::div(acc, l) : NAN;
  }
}

// gpu/attention_f32.cuh's attention_f32_kernel on the host, over library L.
template <class L, Mutation M>
void attention_rows(kernels::Storage s, const void* qp, const void* kp, const void* vp, void* op,
                    const kernels::AttentionArgs& a, float scale) {
  const int64_t d = a.head_dim, hd = a.heads * d, gd = a.kv_heads * d;
  const std::vector<float> q = widened(s, qp, a.q_len * hd), k = widened(s, kp, a.kv_len * gd),
                           v = widened(s, vp, a.kv_len * gd);
  const float cap = M == Mutation::kNoSoftcap ? 0.0f : a.softcap;
  const int mask = mask_code(a.mask);
  std::vector<float> o(static_cast<size_t>(a.q_len * hd));
  for (int64_t i = 0; i < a.q_len; ++i) {
    for (int64_t h = 0; h < a.heads; ++h) {
      const int64_t g = h * a.kv_heads / a.heads, p = a.kv_len - a.q_len + i;
      const attn::KeyRange range = attn::key_range(mask, a.window, a.kv_len, p);
      const attn_f32::KeySplit split = attn_f32::key_split(a.q_len * a.heads, a.kv_len);
      std::vector<RangeState> states;
      for (int64_t b = 0; b < split.count; ++b) {
        int64_t lo = range.lo, hi = range.hi;
        if (split.count > 1) {
          lo = std::max(lo, b * split.keys);
          hi = std::min(hi, (b + 1) * split.keys);
        }
        const float* qrow = q.data() + i * hd + h * d;
        states.push_back(range_state<L, M>(
            [&](int64_t t, int lane) {
              return attn_f32::lane_dot([&](int64_t c) { return qrow[c]; },
                                        [&](int64_t c) { return k[size_t(t * gd + g * d + c)]; }, d,
                                        lane);
            },
            [&](int64_t t, int64_t c) { return v[size_t(t * gd + g * d + c)]; }, d, p, lo, hi, mask,
            a.doc_ids, scale, cap));
      }
      row_output<L, M>(std::move(states), d, o.data() + i * hd + h * d);
    }
  }
  stored(s, o, op);
}

// gpu/mla.cuh's query kernel and gpu/attention_f32.cuh over the latents (gpu::mla_decode's
// host side: the angles, the scale, cos and sin rounded once to f32), over library L.
template <class L, Mutation M>
void mla_rows(kernels::Storage s, const void* q_c, const void* q_r, const void* c_kv,
              const void* k_r, const void* w_uk, void* op, const kernels::MlaDecodeArgs& a) {
  const std::vector<double> angle = kernels::mla_rope_angles("host", a);
  const float scale =
      kernels::detail::checked_scale("host", a.scale, a.head_dim + a.rope_dim, "1/√(d_h + d_h^R)");
  const int64_t h = a.heads, dh = a.head_dim, dr = a.rope_dim, dc = a.latent_dim, t = a.cache_len,
                half = dr / 2, hd = h * dh;
  std::vector<float> cs(static_cast<size_t>(dr));
  for (int64_t j = 0; j < half; ++j) {
    cs[size_t(j)] = static_cast<float>(std::cos(angle[size_t(j)]));
    cs[size_t(half + j)] = static_cast<float>(std::sin(angle[size_t(j)]));
  }
  const std::vector<float> qc = widened(s, q_c, h * dh), qr = widened(s, q_r, h * dr),
                           ckv = widened(s, c_kv, t * dc), kr = widened(s, k_r, t * dr),
                           w = widened(s, w_uk, dc * hd);
  const kernels::RopeLayout layout =
      a.half_split ? kernels::RopeLayout::half_split : kernels::RopeLayout::interleaved;
  std::vector<float> o(static_cast<size_t>(h * dc));
  const attn_f32::KeySplit split = attn_f32::key_split(h, t);
  for (int64_t i = 0; i < h; ++i) {
    std::vector<float> qt(static_cast<size_t>(dc)), qrot(static_cast<size_t>(dr));
    for (int64_t r = 0; r < dc; ++r) {
      std::vector<float> lanes(attn_f32::kWarpLanes);
      for (int lane = 0; lane < attn_f32::kWarpLanes; ++lane) {
        lanes[size_t(lane)] =
            attn_f32::lane_dot([&](int64_t c) { return w[size_t(r * hd + i * dh + c)]; },
                               [&](int64_t c) { return qc[size_t(i * dh + c)]; }, dh, lane);
      }
      qt[size_t(r)] = butterfly(lanes);
    }
    for (int64_t j = 0; j < half; ++j) {
      const int64_t ia = a.half_split ? j : 2 * j, ib = a.half_split ? j + half : 2 * j + 1;
      rope_math::rotate(layout, qr[size_t(i * dr + ia)], qr[size_t(i * dr + ib)], cs[size_t(j)],
                        cs[size_t(half + j)], qrot[size_t(ia)], qrot[size_t(ib)]);
    }
    std::vector<RangeState> states;
    for (int64_t b = 0; b < split.count; ++b) {
      const int64_t lo = split.count > 1 ? b * split.keys : 0;
      const int64_t hi = split.count > 1 ? std::min(t, (b + 1) * split.keys) : t;
      states.push_back(range_state<L, M>(
          [&](int64_t key, int lane) {
            const float part =
                attn_f32::lane_dot([&](int64_t c) { return qt[size_t(c)]; },
                                   [&](int64_t c) { return ckv[size_t(key * dc + c)]; }, dc, lane);
            return attn_f32::lane_dot([&](int64_t c) { return qrot[size_t(c)]; },
                                      [&](int64_t c) { return kr[size_t(key * dr + c)]; }, dr, lane,
                                      part);
          },
          [&](int64_t key, int64_t c) { return ckv[size_t(key * dc + c)]; }, dc, t - 1, lo, hi,
          attn::kCausal, nullptr, scale, 0.0f));
    }
    row_output<L, M>(std::move(states), dc, o.data() + i * dc);
  }
  stored(s, o, op);
}

// gpu/api_attention.h's attention and attention_decode over the host model: the same argument
// checks and default scale.
template <class L, Mutation M>
struct HostF32Attention {
  using Storage = kernels::Storage;
  static void attention(Storage s, const void* q, const void* k, const void* v, void* o,
                        const kernels::AttentionArgs& a) {
    attention_rows<L, M>(s, q, k, v, o, a,
                         kernels::detail::checked_scale("host", a.scale, a.head_dim, "1/√d"));
  }
  static void attention_decode(Storage s, const void* q, const void* k, const void* v, void* o,
                               int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t cache_len,
                               int64_t window, float softcap, float scale) {
    const kernels::AttentionArgs a = kernels::detail::decode_attention_args(
        "host", heads, kv_heads, head_dim, cache_len, window, softcap, scale);
    attention_rows<L, M>(s, q, k, v, o, a,
                         kernels::detail::checked_scale("host", scale, head_dim, "1/√d"));
  }
  static void mla_decode(Storage s, const void* q_c, const void* q_r, const void* c_kv,
                         const void* k_r, const void* w_uk, void* o,
                         const kernels::MlaDecodeArgs& a) {
    mla_rows<L, M>(s, q_c, q_r, c_kv, k_r, w_uk, o, a);
  }
};

// A case of the attention entries run as the gpu backend runs it, through the adapters.
template <class L, Mutation M = Mutation::kNone>
oracle::Outputs<double> as_the_kernel(const oracle::RunContext& ctx) {
  using K = HostF32Attention<L, M>;
  std::vector<oracle::GuardedBuffer> out;
  for (const oracle::OutputDecl& decl : ctx.op.outputs()) {
    out.emplace_back(ref::format_dtype(ctx.storage), decl.shape);
  }
  const kernels::Storage s = *oracle::op_adapters::storage_of<kernels::Storage>(ctx.storage);
  if (ctx.c.op == "paged_attention_decode") {
    oracle::op_adapters::run_paged_decode<K>(ctx.op, s, ctx.in, out);
  } else if (ctx.c.op == "mla_decode") {
    oracle::op_adapters::run_mla_decode<K>(ctx.op, s, ctx.in, out);
  } else if (ctx.c.op == "paged_mla_decode") {
    oracle::op_adapters::run_paged_mla_decode<K>(ctx.op, s, ctx.in, out);
  } else {
    oracle::op_adapters::run_attention<K>(ctx.op, s, ctx.in, out);
  }
  oracle::Outputs<double> o(out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    o[i].values =
        lmo::testdata::values_of(out[i], static_cast<int64_t>(out[i].nbytes()) /
                                             static_cast<int64_t>(ref::dtype_size(out[i].dtype())));
  }
  return o;
}

std::optional<oracle::Recipe> declared(const std::string& op) {
  return oracle::gpu_declared_recipe(oracle::kernel_entry(op));
}

TEST(GpuAttentionF32Math, TheBackendDeclaresStrictFma) {
  for (const char* op : {"attention", "attention_decode", "paged_attention_decode", "mla_decode",
                         "paged_mla_decode"}) {
    ASSERT_TRUE(declared(op).has_value()) << op;
    EXPECT_EQ(declared(op)->text(), "strict+fma") << op;
  }
}

// Every built-in case of a case file, in every storage it lists, passes under its declared
// recipe over each library; returns how many (case, storage) pairs were judged.
int expect_builtin_cases_pass(const char* file) {
  int judged = 0;
  for (const oracle::Case& c : oracle::load_case_file(oracle::builtin_cases_dir() + "/" + file)) {
    for (ref::Format f : c.formats) {
      Harness h(c.source, f);
      for_each_library([&](auto lib, const char* name) {
        const oracle::VerifyRow row = h.judge(name, as_the_kernel<decltype(lib)>, declared(c.op));
        EXPECT_TRUE(row.pass) << c.id << " " << ref::format_name(f) << " over " << name << ": "
                              << row.detail;
        EXPECT_EQ(row.recipe, "strict+fma") << c.id;
      });
      ++judged;
    }
  }
  return judged;
}

TEST(GpuAttentionF32Math, BuiltinCasesPassOnTheHost) {
  EXPECT_EQ(expect_builtin_cases_pass("attention.json"), 30);  // 13 cases, 30 (case, storage) pairs
}

// MLA's absorbed decode and its paged form: every built-in case (one over 5000 latents, split in
// five ranges), in every storage it lists.
TEST(GpuAttentionF32Math, BuiltinMlaCasesPassOnTheHost) {
  EXPECT_EQ(expect_builtin_cases_pass("mla.json"), 16);  // 7 cases, 16 (case, storage) pairs
}

nlohmann::json long_decode(int64_t cache_len, double cap = 0) {
  nlohmann::json c = {{"id", "gpu-math/decode"},
                      {"op", "attention_decode"},
                      {"seed", 4411},
                      {"formats", {"f32", "bf16", "f16"}},
                      {"params", {{"h", 4}, {"g", 2}, {"d", 128}, {"cache_len", cache_len}}}};
  if (cap > 0) {
    c["params"]["softcap"] = cap;
    c["params"]["qk_std"] = 2.5;
  }
  return c;
}

// 1000 cached keys: four chunks, the running maximum and sums rescaled between them.
TEST(GpuAttentionF32Math, LongDecodePassesOnTheHost) {
  for (const char* f : {"f32", "bf16", "f16"}) {
    for (const double cap : {0.0, 50.0}) {
      Harness h(long_decode(1000, cap), *ref::parse_format(f));
      for_each_library([&](auto lib, const char* name) {
        const oracle::VerifyRow row =
            h.judge(name, as_the_kernel<decltype(lib)>, declared("attention_decode"));
        EXPECT_TRUE(row.pass) << f << " cap " << cap << " over " << name << ": " << row.detail;
      });
    }
  }
}

TEST(GpuAttentionF32Math, KeySplitFollowsTheShapeOnly) {
  EXPECT_EQ(attn_f32::key_split(4, 1000).count, 1);     // few keys: one range
  EXPECT_EQ(attn_f32::key_split(4096, 8192).count, 1);  // many rows: one range
  const attn_f32::KeySplit s = attn_f32::key_split(32, 5000);
  EXPECT_EQ(s.keys, 1024);
  EXPECT_EQ(s.count, 5);
  const attn_f32::KeySplit big = attn_f32::key_split(32, 131072);  // 128K keys: 64 ranges of 2048
  EXPECT_EQ(big.keys, 2048);
  EXPECT_EQ(big.count, 64);
  EXPECT_EQ(attn_f32::split_partial_floats(32, 5000, 128), 32 * 5 * (3 + 2 * 128));
  EXPECT_EQ(attn_f32::split_partial_floats(32, 1000, 128), 0);
}

// 5000 cached keys in five ranges (flash-decoding), with and without a window that leaves some
// ranges empty and cuts another: the combine passes where the one-block row did.
TEST(GpuAttentionF32Math, SplitDecodePassesOnTheHost) {
  for (const char* f : {"f32", "bf16"}) {
    for (const int64_t window : {int64_t{0}, int64_t{1500}}) {
      nlohmann::json c = long_decode(5000);
      if (window > 0) c["params"]["window"] = window;
      Harness h(c, *ref::parse_format(f));
      for_each_library([&](auto lib, const char* name) {
        const oracle::VerifyRow row =
            h.judge(name, as_the_kernel<decltype(lib)>, declared("attention_decode"));
        EXPECT_TRUE(row.pass) << f << " window " << window << " over " << name << ": "
                              << row.detail;
      });
    }
  }
}

void expect_caught(Harness& h, const lmo::testing::Kernel& mutant,
                   const std::optional<oracle::Recipe>& recipe, const std::string& what) {
  EXPECT_TRUE(h.judge("gpu-math", as_the_kernel<f32::CudaF32>, recipe).pass) << what;
  const oracle::VerifyRow bad = h.judge("mutant", mutant, recipe);
  EXPECT_FALSE(bad.pass) << what << ": the mutant passed, max ulp " << bad.max_ulps;
}

TEST(GpuAttentionF32Math, MutantsAreCaught) {
  // P̃ in e4m3 while the kernel declares flash-attention (P̃ in the storage format, bf16 here).
  Harness bf16(long_decode(1000), ref::Format::bf16);
  expect_caught(bf16, as_the_kernel<f32::CudaF32, Mutation::kE4m3Probs>,
                oracle::parse_recipe("flash-attention"),
                "P rounded to e4m3 under a flash-attention declaration");
  Harness f32(long_decode(1000), ref::Format::f32);
  expect_caught(f32, as_the_kernel<f32::CudaF32, Mutation::kNoRescale>, declared("attention"),
                "accumulators not rescaled between chunks");
  Harness split(long_decode(5000), ref::Format::f32);
  expect_caught(split, as_the_kernel<f32::CudaF32, Mutation::kDropPartial>, declared("attention"),
                "a split-KV combine that drops a partial");
  for (const oracle::Case& c :
       oracle::load_case_file(oracle::builtin_cases_dir() + "/attention.json")) {
    if (c.id != "attention/gemma2-9b-softcap50") continue;
    Harness capped(c.source, ref::Format::f32);
    expect_caught(capped, as_the_kernel<f32::CudaF32, Mutation::kNoSoftcap>, declared("attention"),
                  "the soft-cap dropped");
  }
}

}  // namespace
}  // namespace lmo::gpu
