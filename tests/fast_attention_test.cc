// fast/attention.h and fast/mla_decode.h against reference/attention.h and reference/mla.h: the
// exact mp result on the same stored inputs, judged with the policy table's attention,
// attention_decode and mla_decode rows (naive_relative: the naive run is the reference in
// simulated f32), for every storage format and every supported Highway target. Shapes cover
// MHA/GQA/MQA, every mask, soft-caps, queries that are the last rows of a longer sequence,
// several key blocks and tiles, fully masked rows; plus thread invariance and argument checks.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "fast/attention.h"
#include "fast/mla_decode.h"
#include "reference/attention.h"
#include "reference/mla.h"
#include "tests/support/fast_cases.h"

namespace lmo::fast {
namespace {

using namespace lmo::testdata;
using ref::mp;

using F32 = ref::Sim<ref::Format::f32>;

// `run` (arming and filling `o`) judged with the op's policy on every supported target, then
// its bytes compared across thread counts.
void expect_judged_everywhere(const std::string& op, const std::function<void()>& run,
                              const std::vector<mp>& exact, const oracle::GuardedBuffer& o,
                              const std::vector<double>& naive, Storage s,
                              const std::string& what) {
  const std::string where = what + " " + std::string(storage_name(s));
  for_each_target([&](const std::string& target) {
    run();
    expect_judged(op, "", exact, o, naive,
                  what + " " + target + " " + std::string(storage_name(s)));
  });
  expect_thread_invariant(
      [&] {
        run();
        return bytes_of(o);
      },
      where);
}

struct Shape {
  Shape(int64_t h_, int64_t g_, int64_t d_, int64_t t_q_, int64_t t_k_,
        AttentionMask mask_ = AttentionMask::causal, int64_t window_ = 0)
      : h(h_), g(g_), d(d_), t_q(t_q_), t_k(t_k_), mask(mask_), window(window_) {}
  Shape& docs(std::vector<int64_t> ids) {
    mask = AttentionMask::document;
    doc_ids = std::move(ids);
    return *this;
  }
  Shape& capped(double c, double std) {
    cap = c;
    qk_std = std;
    return *this;
  }
  int64_t h, g, d, t_q, t_k;
  AttentionMask mask;
  int64_t window;
  std::vector<int64_t> doc_ids;  // t_k ids for the document mask
  double cap = 0;
  double qk_std = 1;  // of q and k
};

ref::MaskKind ref_mask(AttentionMask m) {
  switch (m) {
    case AttentionMask::none:
      return ref::MaskKind::kNone;
    case AttentionMask::causal:
      return ref::MaskKind::kCausal;
    case AttentionMask::window:
      return ref::MaskKind::kSlidingWindow;
    case AttentionMask::document:
      return ref::MaskKind::kDocument;
  }
  return ref::MaskKind::kNone;
}

struct Inputs {
  ref::Tensor q, k, v;
};

Inputs make_inputs(const Shape& c, Storage s, uint64_t seed) {
  return {fast_normal(seed, "q", s, {c.t_q, c.h * c.d}, 0, c.qk_std),
          fast_normal(seed, "k", s, {c.t_k, c.g * c.d}, 0, c.qk_std),
          fast_normal(seed, "v", s, {c.t_k, c.g * c.d})};
}

template <class T>
std::vector<T> reference_attention(const Shape& c, const Inputs& in) {
  ref::AttentionConfig cfg;
  cfg.heads = c.h;
  cfg.kv_heads = c.g;
  cfg.head_dim = c.d;
  cfg.mask = ref_mask(c.mask);
  cfg.window = c.window;
  cfg.document_ids = c.doc_ids;
  if (c.cap > 0) cfg.soft_cap = mp(c.cap);
  const ref::Mat<T> q(c.t_q, c.h * c.d, values_as<T>(in.q));
  const ref::Mat<T> k(c.t_k, c.g * c.d, values_as<T>(in.k));
  const ref::Mat<T> v(c.t_k, c.g * c.d, values_as<T>(in.v));
  return ref::attention<T>(q, k, v, cfg).data;
}

void run_attention(const Shape& c, Storage s, const Inputs& in, oracle::GuardedBuffer& o) {
  AttentionArgs a;
  a.heads = c.h;
  a.kv_heads = c.g;
  a.head_dim = c.d;
  a.q_len = c.t_q;
  a.kv_len = c.t_k;
  a.mask = c.mask;
  a.window = c.window;
  a.doc_ids = c.doc_ids.empty() ? nullptr : c.doc_ids.data();
  a.softcap = static_cast<float>(c.cap);
  o.arm();
  attention(s, in.q.bytes().data(), in.k.bytes().data(), in.v.bytes().data(), o.data(), a);
}

// Every storage and target judged against the exact reference; thread invariance per storage.
void check_attention(const Shape& c, uint64_t seed, const std::string& what) {
  for (Storage s : kAllStorages) {
    const Inputs in = make_inputs(c, s, seed);
    const std::vector<mp> exact = reference_attention<mp>(c, in);
    const std::vector<double> naive = as_doubles(reference_attention<F32>(c, in));
    oracle::GuardedBuffer o(dtype_of(s), {c.t_q, c.h * c.d});
    expect_judged_everywhere(
        "attention", [&] { run_attention(c, s, in, o); }, exact, o, naive, s, what);
  }
}

TEST(FastAttention, MhaCausal) { check_attention({4, 4, 32, 40, 40}, 601, "MHA causal"); }
TEST(FastAttention, GqaCausal) { check_attention({8, 2, 16, 33, 33}, 602, "GQA causal"); }
TEST(FastAttention, MqaNoMask) {
  check_attention({4, 1, 64, 20, 20, AttentionMask::none}, 603, "MQA none");
}
TEST(FastAttention, SlidingWindow) {
  check_attention({4, 2, 16, 40, 40, AttentionMask::window, 12}, 604, "window 12");
  check_attention({2, 2, 8, 9, 9, AttentionMask::window, 1}, 605, "window 1");  // self only
}
TEST(FastAttention, DocumentMask) {
  std::vector<int64_t> ids(24, 0);
  for (int64_t j = 8; j < 24; ++j) ids[j] = j < 15 ? 1 : 2;
  check_attention(Shape(4, 2, 16, 24, 24).docs(ids), 606, "documents");
  // Ids that are not runs: hidden keys inside a block's visible range.
  std::vector<int64_t> mixed(30);
  for (int64_t j = 0; j < 30; ++j) mixed[j] = (j * 7) % 3;
  check_attention(Shape(2, 1, 16, 30, 30).docs(mixed), 607, "mixed ids");
}
TEST(FastAttention, SoftCap) {
  // Gemma 2's cap of 50 on logits spread wide enough to reach it, and a tight cap of 2.
  check_attention(Shape(4, 2, 32, 16, 16).capped(50.0, 6.0), 608, "cap 50");
  check_attention(Shape(4, 4, 16, 12, 12, AttentionMask::none).capped(2.0, 2.0), 609, "cap 2");
}
// Several key blocks (128 keys) and row tiles; queries the last rows of a longer sequence.
TEST(FastAttention, LongSequencesAndChunkedQueries) {
  check_attention({2, 2, 8, 140, 140}, 610, "T 140 causal");
  check_attention({4, 1, 16, 5, 300}, 611, "5 of 300 causal");
  check_attention({2, 1, 16, 70, 290, AttentionMask::window, 150}, 612, "window 150");
  std::vector<int64_t> ids(260, 0);
  for (int64_t j = 100; j < 260; ++j) ids[j] = j < 200 ? 1 : 2;
  check_attention(Shape(2, 2, 8, 130, 260).docs(ids), 613, "docs 260");
}

// More queries than keys: the first rows' positions are negative, nothing is visible, and the
// reference's output there is NaN (0/0); the other rows are judged as usual (NaN parity).
TEST(FastAttention, FullyMaskedRowsAreNaN) {
  const Shape c(2, 1, 8, 6, 3);
  check_attention(c, 614, "T_q 6 > T_k 3");
  const Inputs in = make_inputs(c, Storage::f32, 614);
  oracle::GuardedBuffer o(ref::DType::f32, {c.t_q, c.h * c.d});
  run_attention(c, Storage::f32, in, o);
  const auto* y = static_cast<const float*>(o.data());
  for (int64_t i = 0; i < c.t_q * c.h * c.d; ++i) {
    EXPECT_EQ(std::isnan(y[i]), i < 3 * c.h * c.d) << "element " << i;
  }
}

TEST(FastAttention, ThreadCountsGiveIdenticalBytes) {
  // Many tiles: 4 KV heads × 2 head tiles (16 query heads each) × rows, several key blocks.
  const Shape c(128, 4, 8, 3, 200);
  for (Storage s : kAllStorages) {
    const Inputs in = make_inputs(c, s, 615);
    oracle::GuardedBuffer o(dtype_of(s), {c.t_q, c.h * c.d});
    const int old = threads();
    std::vector<uint8_t> one;
    for (int n : {1, 2, 5}) {
      set_threads(n);
      run_attention(c, s, in, o);
      if (n == 1) one = bytes_of(o);
      EXPECT_TRUE(bytes_of(o) == one) << storage_name(s) << ": differs with " << n << " threads";
    }
    set_threads(old);
  }
}

// F16: the decode step is the last row of causal (or windowed) attention over the cache.
void check_decode(int64_t h, int64_t g, int64_t d, int64_t t, int64_t window, double cap,
                  uint64_t seed) {
  Shape c(h, g, d, 1, t, window > 0 ? AttentionMask::window : AttentionMask::causal, window);
  c.capped(cap, 1.0);
  const std::string what = "decode h" + std::to_string(h) + " g" + std::to_string(g) + " t" +
                           std::to_string(t) + " w" + std::to_string(window);
  for (Storage s : kAllStorages) {
    const Inputs in = make_inputs(c, s, seed);
    const std::vector<mp> exact = reference_attention<mp>(c, in);
    const std::vector<double> naive = as_doubles(reference_attention<F32>(c, in));
    oracle::GuardedBuffer o(dtype_of(s), {1, h * d});
    const auto run = [&] {
      o.arm();
      attention_decode(s, in.q.bytes().data(), in.k.bytes().data(), in.v.bytes().data(), o.data(),
                       h, g, d, t, window, static_cast<float>(cap));
    };
    expect_judged_everywhere("attention_decode", run, exact, o, naive, s, what);
  }
}

TEST(FastAttentionDecode, GqaCache) { check_decode(8, 2, 64, 300, 0, 0, 620); }
TEST(FastAttentionDecode, SlidingWindow) { check_decode(4, 4, 32, 200, 96, 0, 621); }
TEST(FastAttentionDecode, MqaSoftCap) { check_decode(16, 1, 16, 40, 0, 30.0, 622); }
TEST(FastAttentionDecode, SingleToken) { check_decode(2, 1, 8, 1, 0, 0, 623); }

struct MlaShape {
  int64_t h, dh, dr, dc, t;
  bool half_split = false;
  double base = 10000;
};

struct MlaInputs {
  ref::Tensor q_c, q_r, c_kv, k_r, w_uk;
};

template <class T>
std::vector<T> reference_mla(const MlaShape& c, const MlaInputs& in) {
  ref::MlaConfig cfg;
  cfg.heads = c.h;
  cfg.head_dim = c.dh;
  cfg.rope_dim = c.dr;
  cfg.kv_latent_dim = c.dc;
  cfg.rope_base = mp(c.base);
  cfg.rope_layout = c.half_split ? ref::RopeLayout::kHalfSplit : ref::RopeLayout::kInterleaved;
  const ref::Mat<T> q_c(1, c.h * c.dh, values_as<T>(in.q_c));
  const ref::Mat<T> q_r(1, c.h * c.dr, values_as<T>(in.q_r));
  const ref::Mat<T> w_uk(c.dc, c.h * c.dh, values_as<T>(in.w_uk));
  ref::MlaLatentCache<T> cache;
  cache.c_kv = ref::Mat<T>(c.t, c.dc, values_as<T>(in.c_kv));
  cache.k_r = ref::Mat<T>(c.t, c.dr, values_as<T>(in.k_r));
  return ref::mla_latent_attention<T>(ref::mla_absorbed_query<T>(q_c, w_uk, cfg),
                                      ref::mla_rope_rows(q_r, c.h, c.t - 1, cfg), cache, cfg,
                                      ref::mla_scale(cfg))
      .data;
}

void check_mla(const MlaShape& c, uint64_t seed) {
  const std::string what = "MLA h" + std::to_string(c.h) + " t" + std::to_string(c.t) +
                           (c.half_split ? " half-split" : " interleaved");
  for (Storage s : kAllStorages) {
    const MlaInputs in{
        fast_normal(seed, "q_c", s, {1, c.h * c.dh}), fast_normal(seed, "q_r", s, {1, c.h * c.dr}),
        fast_normal(seed, "c_kv", s, {c.t, c.dc}), fast_normal(seed, "k_r", s, {c.t, c.dr}),
        fast_normal(seed, "w_uk", s, {c.dc, c.h * c.dh}, 0,
                    1 / std::sqrt(static_cast<double>(c.dh)))};
    const std::vector<mp> exact = reference_mla<mp>(c, in);
    const std::vector<double> naive = as_doubles(reference_mla<F32>(c, in));
    oracle::GuardedBuffer o(dtype_of(s), {1, c.h * c.dc});
    MlaDecodeArgs a;
    a.heads = c.h;
    a.head_dim = c.dh;
    a.rope_dim = c.dr;
    a.latent_dim = c.dc;
    a.cache_len = c.t;
    a.rope_base = c.base;
    a.half_split = c.half_split;
    const auto run = [&] {
      o.arm();
      mla_decode(s, in.q_c.bytes().data(), in.q_r.bytes().data(), in.c_kv.bytes().data(),
                 in.k_r.bytes().data(), in.w_uk.bytes().data(), o.data(), a);
    };
    expect_judged_everywhere("mla_decode", run, exact, o, naive, s, what);
  }
}

TEST(FastMlaDecode, Interleaved) { check_mla({2, 16, 8, 64, 150}, 630); }
TEST(FastMlaDecode, HalfSplitManyHeads) { check_mla({20, 8, 4, 24, 33, true, 500}, 631); }
TEST(FastMlaDecode, SingleToken) { check_mla({1, 4, 2, 8, 1}, 632); }

TEST(FastAttention, Validation) {
  float x[64] = {};
  float y[64];
  AttentionArgs a;
  a.heads = 2, a.kv_heads = 1, a.head_dim = 4, a.q_len = 2, a.kv_len = 2;
  EXPECT_NO_THROW(attention(Storage::f32, x, x, x, y, a));
  auto bad = [&](auto change) {
    AttentionArgs b = a;
    change(b);
    EXPECT_THROW(attention(Storage::f32, x, x, x, y, b), std::invalid_argument);
  };
  bad([](AttentionArgs& b) { b.heads = 0; });
  bad([](AttentionArgs& b) { b.kv_heads = 0; });
  bad([](AttentionArgs& b) { b.heads = 3, b.kv_heads = 2; });  // g must divide h
  bad([](AttentionArgs& b) { b.head_dim = 0; });
  bad([](AttentionArgs& b) { b.q_len = -1; });
  bad([](AttentionArgs& b) { b.mask = AttentionMask::window; });    // window 0
  bad([](AttentionArgs& b) { b.mask = AttentionMask::document; });  // no ids
  bad([](AttentionArgs& b) { b.mask = static_cast<AttentionMask>(9); });
  bad([](AttentionArgs& b) { b.scale = -1; });
  bad([](AttentionArgs& b) { b.scale = INFINITY; });
  bad([](AttentionArgs& b) { b.softcap = -2; });
  bad([](AttentionArgs& b) { b.softcap = NAN; });
  const int64_t ids[2] = {0, 0};
  bad([&](AttentionArgs& b) {
    b.mask = AttentionMask::document, b.doc_ids = ids, b.q_len = 3;  // T_q > T_k
  });
  EXPECT_THROW(attention(Storage::f32, nullptr, x, x, y, a), std::invalid_argument);
  EXPECT_THROW(attention(Storage::f32, x, x, nullptr, y, a), std::invalid_argument);
  EXPECT_THROW(attention(Storage::f32, x, x, x, nullptr, a), std::invalid_argument);
  EXPECT_THROW(attention(static_cast<Storage>(7), x, x, x, y, a), std::invalid_argument);
  AttentionArgs empty = a;
  empty.q_len = 0;
  EXPECT_NO_THROW(attention(Storage::f32, nullptr, nullptr, nullptr, nullptr, empty));

  EXPECT_NO_THROW(attention_decode(Storage::f32, x, x, x, y, 2, 1, 4, 3));
  EXPECT_THROW(attention_decode(Storage::f32, x, x, x, y, 2, 1, 4, 0), std::invalid_argument);
  EXPECT_THROW(attention_decode(Storage::f32, x, x, x, y, 2, 1, 4, 3, -1), std::invalid_argument);
  EXPECT_THROW(attention_decode(Storage::f32, x, x, x, y, 2, 2, 4, 3, 0, -1.0f),
               std::invalid_argument);
  EXPECT_THROW(attention_decode(Storage::f32, x, nullptr, x, y, 2, 1, 4, 3), std::invalid_argument);
}

TEST(FastMlaDecode, Validation) {
  float x[64] = {};
  float y[64];
  MlaDecodeArgs a;
  a.heads = 2, a.head_dim = 2, a.rope_dim = 2, a.latent_dim = 4, a.cache_len = 3;
  EXPECT_NO_THROW(mla_decode(Storage::f32, x, x, x, x, x, y, a));
  auto bad = [&](auto change) {
    MlaDecodeArgs b = a;
    change(b);
    EXPECT_THROW(mla_decode(Storage::f32, x, x, x, x, x, y, b), std::invalid_argument);
  };
  bad([](MlaDecodeArgs& b) { b.heads = 0; });
  bad([](MlaDecodeArgs& b) { b.head_dim = 0; });
  bad([](MlaDecodeArgs& b) { b.rope_dim = 3; });
  bad([](MlaDecodeArgs& b) { b.rope_dim = 0; });
  bad([](MlaDecodeArgs& b) { b.latent_dim = 0; });
  bad([](MlaDecodeArgs& b) { b.cache_len = 0; });
  bad([](MlaDecodeArgs& b) { b.rope_base = 0; });
  bad([](MlaDecodeArgs& b) { b.rope_base = INFINITY; });
  bad([](MlaDecodeArgs& b) { b.scale = -1; });
  EXPECT_THROW(mla_decode(Storage::f32, x, x, x, x, nullptr, y, a), std::invalid_argument);
  EXPECT_THROW(mla_decode(Storage::f32, x, x, x, x, x, nullptr, a), std::invalid_argument);
}

}  // namespace
}  // namespace lmo::fast
