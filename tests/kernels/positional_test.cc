// The learned and relative position kernels and the sinusoidal encoding (fast/learned_position.h,
// shaw_logits.h, t5_bias.h, sinusoidal_pe.h; gpu/api_positional.h), one typed test over every
// kernel library (tests/support/kernel_libraries.h), against the exact reference:
//  - the oracle's ops learned_position, shaw_logits, t5_bias and sinusoidal_pe
//    (reference/positional.h in mp on the same stored inputs), judged with the policy table's
//    rows on every storage format, through the backends' adapters
//    (oracle/backends/positional_adapters.h) where there is one;
//  - learned_position in f32 and t5_bias: every value the correctly rounded one; shaw_logits on
//    small integer inputs, where every f32 operation is exact: every logit equals the
//    reference's exactly (any wrong table row or clip shows), over band, clip and block edges;
//  - the sinusoidal encoding within 2^-24 of the exact one at positions up to 2^20 (the naive
//    f32 encoding misses that 1000-fold), widths of 1, 65 and 256 pairs;
//  - repeatability (thread counts on the CPU, a second run on the GPU) and bad arguments:
//    out-of-range ids and positions, null pointers, negative sizes and bucket parameters throw
//    std::invalid_argument naming the argument (on the GPU before any CUDA call, so without a
//    device too).
// Library-specific: T5's bucket (kernels::T5Buckets, the CPU build) against the reference's for
// every relative position in ±2^20 and at every threshold; the GPU's encoding bit for bit the host
// evaluation of gpu/angles.h, and with an unaligned output. The GPU kernels bitwise equal to the
// CPU's: gpu_position_tables_test; their index math on the host: gpu_relative_position_math_test.
#ifdef LMO_TESTED_KERNELS_GPU
#include <cuda_runtime.h>
#endif
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "fast/kernel_api.h"
#include "oracle/backends/positional_adapters.h"
#include "oracle/ops/positional.h"
#include "reference/positional.h"
#include "tests/support/kernel_libraries.h"
#include "tests/support/oracle_harness.h"
#ifdef LMO_TESTED_KERNELS_GPU
#include "gpu/angles.h"
#include "gpu/launch_positional.h"
#endif

namespace lmo::testdata {
namespace {

using fast::Storage;
using fast::T5BiasShape;
using nlohmann::json;
using ref::mp;

template <class Lib>
class KernelPositional : public ::testing::Test {};
TYPED_TEST_SUITE(KernelPositional, TestedKernels);

// One op case (the oracle's parameters) in storage s: its inputs, exact values and naive run.
struct Prepared {
  Prepared(const std::string& op, const json& params, Storage s)
      : h(json{{"id", "kernels/" + op},
               {"op", op},
               {"seed", 7301},
               {"formats", {std::string(fast::storage_name(s))}},
               {"params", params}},
          format_of(s)),
        exact(h.op().exact(h.inputs())[0].values),
        naive(h.op().simulated(ref::Format::f32, h.inputs())[0].values) {}
  const oracle::PositionalParams& p() const {
    return dynamic_cast<const oracle::PositionalOp&>(h.op()).params();
  }
  lmo::testing::Harness h;
  std::vector<mp> exact;
  std::vector<double> naive;
};

// Runs the op's kernel of library Lib (through the backends' adapter where there is one) into y
// (armed first); returns y's bytes.
template <class Lib>
std::vector<uint8_t> run(const Prepared& c, Storage s, std::vector<oracle::GuardedBuffer>& y) {
  namespace a = oracle::op_adapters;
  y[0].arm();
  const std::string& op = c.h.c().op;
  if (op == "learned_position") {
    a::run_learned_position<Lib>(c.h.op(), s, c.h.inputs(), y);
  } else if (op == "shaw_logits") {
    a::run_shaw_logits<Lib>(c.h.op(), s, c.h.inputs(), y);
  } else if (op == "t5_bias") {
    a::run_t5_bias<Lib>(c.h.op(), s, c.h.inputs(), y);
  } else {
    const std::vector<int64_t> positions = c.h.inputs().ints("positions");
    Lib::sinusoidal_pe(s, positions.data(), y[0].data(), c.p().tokens, c.p().d, c.p().base);
  }
  return bytes_of(y[0]);
}

// The kernel on every variant of the library, judged with the op's policy; exact_store: also
// every stored value the exact value rounded once to s (the policy's ulp 0 without its margin).
template <class Lib>
void expect_passes(const std::string& op, const json& params, Storage s, const std::string& what,
                   bool exact_store = false) {
  const Prepared c(op, params, s);
  std::vector<oracle::GuardedBuffer> y;
  y.emplace_back(dtype_of(s), c.h.op().outputs()[0].shape);
  Lib::for_each_variant([&](const std::string& variant) {
    run<Lib>(c, s, y);
    const std::string where = variant + " " + std::string(fast::storage_name(s)) + " " + what;
    expect_judged(op, "", c.exact, y[0], c.naive, where);
    if (!exact_store) return;
    ref::Tensor want(dtype_of(s), c.h.op().outputs()[0].shape);
    for (int64_t i = 0; i < want.numel(); ++i) {
      want.set_bits(i, ref::encode(format_of(s), c.exact[static_cast<size_t>(i)]));
    }
    const std::vector<uint8_t> got = bytes_of(y[0]);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), want.bytes().begin()))
        << where << ": a stored value differs from the correctly rounded one";
  });
  Lib::expect_repeatable([&] { return run<Lib>(c, s, y); }, op + " " + what);
}

// ---- learned_position ----

TYPED_TEST(KernelPositional, LearnedPositionEveryStorage) {
  LMO_REQUIRE_KERNELS(TypeParam);
  // d 75: rows end in a partial vector on every target (and an odd bf16 pair); 300 tokens of 75
  // run in three CPU chunks of 109 tokens and several GPU blocks.
  const json small = {{"tokens", 300}, {"d", 75}, {"vocab", 50}, {"max_positions", 300}};
  // Position rows past 2^16.
  const json far = {
      {"tokens", 40}, {"d", 8}, {"vocab", 64}, {"min_position", 65536}, {"max_positions", 66000}};
  for (Storage s : fast::kAllStorages) {
    expect_passes<TypeParam>("learned_position", small, s, "d=75", s == Storage::f32);
  }
  expect_passes<TypeParam>("learned_position", far, Storage::f32, "positions>=2^16", true);
}

// ---- shaw_logits ----

TYPED_TEST(KernelPositional, ShawLogitsEveryStorage) {
  LMO_REQUIRE_KERNELS(TypeParam);
  const std::vector<std::pair<std::string, json>> shapes = {
      {"transformer-base k16",
       {{"n_q", 48}, {"n_k", 48}, {"d_k", 64}, {"max_relative_position", 16}}},
      {"odd widths", {{"n_q", 9}, {"n_k", 70}, {"d_k", 7}, {"max_relative_position", 3}}},
      {"k 0, d 1", {{"n_q", 30}, {"n_k", 5}, {"d_k", 1}, {"max_relative_position", 0}}},
      {"k beyond the lengths",
       {{"n_q", 20}, {"n_k", 31}, {"d_k", 16}, {"max_relative_position", 100}}},
      {"three row blocks", {{"n_q", 150}, {"n_k", 24}, {"d_k", 8}, {"max_relative_position", 5}}},
  };
  for (const auto& [what, params] : shapes) {
    for (Storage s : fast::kAllStorages) expect_passes<TypeParam>("shaw_logits", params, s, what);
  }
}

TYPED_TEST(KernelPositional, ShawExactOnIntegerInputs) {
  LMO_REQUIRE_KERNELS(TypeParam);
  struct Shape {
    int64_t n_q, n_k, kmax;
  };
  const int64_t dk = 4;
  for (const Shape& sh : {Shape{7, 12, 3}, Shape{12, 7, 2}, Shape{5, 5, 0}, Shape{6, 9, 20},
                          Shape{150, 40, 9}, Shape{3, 300, 4}}) {
    const auto fill = [](int64_t n, int64_t seed) {
      std::vector<float> v(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)
        v[static_cast<size_t>(i)] = static_cast<float>((i * 7 + seed * 3) % 9 - 4);
      return v;
    };
    const std::vector<float> q = fill(sh.n_q * dk, 1), k = fill(sh.n_k * dk, 2);
    std::vector<float> rel(static_cast<size_t>((2 * sh.kmax + 1) * dk));
    for (size_t i = 0; i < rel.size(); ++i)
      rel[i] = static_cast<float>(static_cast<int64_t>(i % 9) - 4) +
               0.5f * static_cast<float>(i / dk % 2);
    const ref::Mat<mp> mq(sh.n_q, dk, std::vector<mp>(q.begin(), q.end()));
    const ref::Mat<mp> mk(sh.n_k, dk, std::vector<mp>(k.begin(), k.end()));
    const ref::Mat<mp> mr(2 * sh.kmax + 1, dk, std::vector<mp>(rel.begin(), rel.end()));
    const ref::Mat<mp> want = ref::shaw_relative_logits_qk<mp>(mq, mk, mr, sh.kmax);
    std::vector<float> e(static_cast<size_t>(sh.n_q * sh.n_k));
    TypeParam::for_each_variant([&](const std::string& target) {
      std::fill(e.begin(), e.end(), -1e30f);
      TypeParam::shaw_logits(Storage::f32, q.data(), k.data(), rel.data(), e.data(), sh.n_q, sh.n_k,
                             dk, sh.kmax);
      for (int64_t i = 0; i < sh.n_q; ++i) {
        for (int64_t j = 0; j < sh.n_k; ++j) {
          ASSERT_EQ(e[static_cast<size_t>(i * sh.n_k + j)], ref::to_double(want(i, j)))
              << target << " n_q " << sh.n_q << " n_k " << sh.n_k << " K " << sh.kmax << " at ("
              << i << ", " << j << ")";
        }
      }
    });
  }
}

// ---- t5_bias ----

TYPED_TEST(KernelPositional, T5BiasEveryStorage) {
  LMO_REQUIRE_KERNELS(TypeParam);
  const std::vector<std::pair<std::string, json>> shapes = {
      {"t5 encoder", {{"heads", 2}, {"bidirectional", true}, {"query_len", 32}, {"key_len", 256}}},
      {"decoder with offset",
       {{"heads", 2}, {"query_len", 120}, {"key_len", 100}, {"query_offset", 4000}}},
      {"erratum setting",
       {{"heads", 1},
        {"num_buckets", 36},
        {"max_distance", 50},
        {"query_len", 70},
        {"key_len", 65}}},
      {"one key", {{"heads", 4}, {"bidirectional", true}, {"query_len", 9}, {"key_len", 1}}},
  };
  for (const auto& [what, params] : shapes) {
    for (Storage s : fast::kAllStorages) expect_passes<TypeParam>("t5_bias", params, s, what, true);
  }
}

// ---- sinusoidal_pe ----

TYPED_TEST(KernelPositional, SinusoidalEveryStorageAndWidth) {
  LMO_REQUIRE_KERNELS(TypeParam);
  // 65 pairs (a partial vector on every target, a partial GPU block), 512 (Transformer base), a
  // narrow one.
  for (int64_t d : {130, 512, 2}) {
    for (Storage s : fast::kAllStorages) {
      expect_passes<TypeParam>("sinusoidal_pe",
                               {{"tokens", 40}, {"d", d}, {"max_position", 1 << 20}}, s,
                               "d=" + std::to_string(d));
    }
  }
  expect_passes<TypeParam>(
      "sinusoidal_pe",
      {{"tokens", 4}, {"d", 64}, {"base", 500000}, {"max_position", int64_t{1} << 40}},
      Storage::bf16, "base 500000, positions to 2^40");
}

// |pe − exact| ≤ 2^-24 at positions up to 2^20 (half an ulp of values in [0.5, 1) plus the
// angle's ~2^-37 rad); the naive f32 encoding misses it 1000-fold.
TYPED_TEST(KernelPositional, SinusoidalAccurateToF32AtLongContext) {
  LMO_REQUIRE_KERNELS(TypeParam);
  const Prepared c(
      "sinusoidal_pe",
      {{"tokens", 64}, {"d", 512}, {"min_position", 1 << 19}, {"max_position", 1 << 20}},
      Storage::f32);
  const double bound = 0x1p-24;
  EXPECT_GT(max_error(c.exact, c.naive), 1000 * bound);
  std::vector<oracle::GuardedBuffer> y;
  y.emplace_back(ref::DType::f32, c.h.op().outputs()[0].shape);
  TypeParam::for_each_variant([&](const std::string& variant) {
    run<TypeParam>(c, Storage::f32, y);
    EXPECT_LE(max_error(c.exact, values_of(y[0], static_cast<int64_t>(c.exact.size()))), bound)
        << variant;
  });
}

TYPED_TEST(KernelPositional, SinusoidalArguments) {
  const int64_t pos[2] = {0, 1}, far[1] = {(int64_t{1} << 53) + 1};
  float y[8];
  const Storage f32 = Storage::f32;
  if (TypeParam::unavailable().empty()) {
    EXPECT_NO_THROW(TypeParam::sinusoidal_pe(f32, pos, y, 2, 4, 10000));
  }
  EXPECT_THROW(TypeParam::sinusoidal_pe(f32, pos, y, 2, 3, 10000), std::invalid_argument);
  EXPECT_THROW(TypeParam::sinusoidal_pe(f32, pos, y, 2, 0, 10000), std::invalid_argument);
  EXPECT_THROW(TypeParam::sinusoidal_pe(f32, pos, y, -1, 4, 10000), std::invalid_argument);
  EXPECT_THROW(TypeParam::sinusoidal_pe(f32, nullptr, y, 2, 4, 10000), std::invalid_argument);
  EXPECT_THROW(TypeParam::sinusoidal_pe(f32, pos, nullptr, 2, 4, 10000), std::invalid_argument);
  EXPECT_THROW(TypeParam::sinusoidal_pe(f32, pos, y, 2, 4, 0.5), std::invalid_argument);
  EXPECT_THROW(TypeParam::sinusoidal_pe(f32, pos, y, 2, 4, INFINITY), std::invalid_argument);
  EXPECT_THROW(TypeParam::sinusoidal_pe(f32, far, y, 1, 4, 10000), std::invalid_argument);
  EXPECT_THROW(TypeParam::sinusoidal_pe(static_cast<Storage>(7), pos, y, 2, 4, 10000),
               std::invalid_argument);
  // Nothing to write: nothing is read (and no CUDA call on the GPU).
  EXPECT_NO_THROW(TypeParam::sinusoidal_pe(f32, nullptr, nullptr, 0, 4, 10000));
}

// ---- bad arguments of the learned and relative position kernels ----

// fn throws std::invalid_argument whose message contains every fragment.
void expect_rejected(const std::function<void()>& fn, const std::vector<std::string>& fragments) {
  try {
    fn();
    ADD_FAILURE() << "no exception; expected one naming " << fragments.front();
  } catch (const std::invalid_argument& e) {
    for (const std::string& f : fragments) {
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos)
          << "message \"" << e.what() << "\" lacks \"" << f << "\"";
    }
  }
}

TYPED_TEST(KernelPositional, LearnedPositionArguments) {
  const bool runs = TypeParam::unavailable().empty();
  const std::vector<float> tokens(4 * 3, 1.0f), positions(5 * 3, 2.0f);
  std::vector<float> h(3 * 3);
  const std::vector<int64_t> good_ids = {0, 3, 1}, good_pos = {4, 0, 2};
  const auto call = [&](const std::vector<int64_t>& ids, const std::vector<int64_t>& pos) {
    TypeParam::learned_position(Storage::f32, tokens.data(), 4, positions.data(), 5, ids.data(),
                                pos.data(), h.data(), 3, 3);
  };
  if (runs) {
    call(good_ids, good_pos);
    EXPECT_EQ(h[3], 3.0f);
  }
  expect_rejected([&] { call({0, 4, 1}, good_pos); }, {"token_ids[1] is 4", "< 4"});
  expect_rejected([&] { call({0, 1, -1}, good_pos); }, {"token_ids[2] is -1"});
  expect_rejected([&] { call(good_ids, {0, 5, 1}); }, {"positions[1] is 5", "< 5"});
  expect_rejected([&] { call(good_ids, {-7, 0, 1}); }, {"positions[0] is -7"});
  expect_rejected(
      [&] {
        TypeParam::learned_position(Storage::f32, nullptr, 4, positions.data(), 5, good_ids.data(),
                                    good_pos.data(), h.data(), 3, 3);
      },
      {"token_table is null"});
  expect_rejected(
      [&] {
        TypeParam::learned_position(Storage::f32, tokens.data(), 4, positions.data(), 5,
                                    good_ids.data(), nullptr, h.data(), 3, 3);
      },
      {"positions is null"});
  expect_rejected(
      [&] {
        TypeParam::learned_position(Storage::f32, tokens.data(), 4, positions.data(), 5,
                                    good_ids.data(), good_pos.data(), h.data(), -1, 3);
      },
      {"tokens is -1"});
  expect_rejected(
      [&] {
        TypeParam::learned_position(Storage::f32, tokens.data(), 4, positions.data(), 5,
                                    good_ids.data(), good_pos.data(), h.data(), 3, 0);
      },
      {"d is 0"});
  // No tokens: nothing is read, null pointers are fine.
  TypeParam::learned_position(Storage::bf16, nullptr, 4, nullptr, 5, nullptr, nullptr, nullptr, 0,
                              3);
}

TYPED_TEST(KernelPositional, ShawLogitsArguments) {
  const bool runs = TypeParam::unavailable().empty();
  const std::vector<float> q(2 * 4, 1.0f), k(3 * 4, 1.0f), rel(3 * 4, 1.0f);
  std::vector<float> e(2 * 3);
  expect_rejected(
      [&] {
        TypeParam::shaw_logits(Storage::f32, q.data(), k.data(), rel.data(), e.data(), -2, 3, 4, 1);
      },
      {"n_q is -2"});
  expect_rejected(
      [&] {
        TypeParam::shaw_logits(Storage::f32, q.data(), k.data(), rel.data(), e.data(), 2, 3, 0, 1);
      },
      {"d_k is 0"});
  expect_rejected(
      [&] {
        TypeParam::shaw_logits(Storage::f32, q.data(), k.data(), rel.data(), e.data(), 2, 3, 4, -1);
      },
      {"max_relative_position is -1"});
  expect_rejected(
      [&] {
        TypeParam::shaw_logits(Storage::f32, q.data(), nullptr, rel.data(), e.data(), 2, 3, 4, 1);
      },
      {"k is null"});
  expect_rejected(
      [&] {
        TypeParam::shaw_logits(Storage::f32, q.data(), k.data(), nullptr, e.data(), 2, 3, 4, 1);
      },
      {"rel_k is null"});
  if (runs) {
    TypeParam::shaw_logits(Storage::f32, q.data(), k.data(), rel.data(), e.data(), 2, 3, 4, 1);
    EXPECT_EQ(e[0], 4.0f);  // (1·(1 + 1))·4 / 2
  }
}

TYPED_TEST(KernelPositional, T5BiasArguments) {
  const bool runs = TypeParam::unavailable().empty();
  const std::vector<float> table(32 * 2, 0.5f);
  std::vector<float> bias(2 * 3 * 4);
  const auto call = [&](T5BiasShape sh) {
    TypeParam::t5_bias(Storage::f32, table.data(), bias.data(), sh);
  };
  const T5BiasShape good{32, 2, 3, 4, false, 128, 0};
  if (runs) {
    call(good);
    EXPECT_EQ(bias[5], 0.5f);
  }
  auto with = [&](auto change) {
    T5BiasShape sh = good;
    change(sh);
    return [=] { call(sh); };
  };
  expect_rejected(with([](T5BiasShape& s) { s.heads = 0; }), {"heads is 0"});
  expect_rejected(with([](T5BiasShape& s) { s.query_len = -1; }), {"query_len is -1"});
  expect_rejected(with([](T5BiasShape& s) { s.key_len = -3; }), {"key_len is -3"});
  expect_rejected(with([](T5BiasShape& s) { s.query_offset = -1; }), {"query_offset is -1"});
  expect_rejected(with([](T5BiasShape& s) {
                    s.num_buckets = 3;
                    s.bidirectional = true;
                  }),
                  {"num_buckets is 3", "4 (bidirectional)"});
  expect_rejected(with([](T5BiasShape& s) { s.max_distance = 16; }),
                  {"max_distance is 16", "max_exact = 16"});
  expect_rejected(with([](T5BiasShape& s) { s.num_buckets = 8192; }), {"num_buckets is 8192"});
  expect_rejected([&] { TypeParam::t5_bias(Storage::f32, nullptr, bias.data(), good); },
                  {"table is null"});
  expect_rejected([&] { TypeParam::t5_bias(Storage::f32, table.data(), nullptr, good); },
                  {"bias is null"});
}

#ifdef LMO_TESTED_KERNELS_GPU
// ---- the GPU's own ----

// The device evaluates gpu/angles.h with IEEE operations only (fma, rint, __dmul_rn, products
// and sums that nvcc has nothing to contract in), so its f32 values are bit for bit the host's
// evaluation of the same function, which gpu_angles_math_test shows correctly rounded.
TEST(GpuSinusoidalPe, SameBitsAsTheHostEvaluation) {
  LMO_REQUIRE_KERNELS(GpuKernels);
  const int64_t tokens = 50, d = 256, half = d / 2;
  std::vector<int64_t> pos;
  for (int64_t t = 0; t < tokens; ++t) pos.push_back(-(int64_t{1} << 20) + t * 41947);
  const fast::Turns turns = fast::turns_of(fast::inverse_powers(10000.0L, half, d));
  std::vector<float> want, got(static_cast<size_t>(tokens * d));
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t i = 0; i < half; ++i) {
      double c = 0, s = 0;
      gpu::cos_sin_of_turns(static_cast<double>(pos[static_cast<size_t>(t)]),
                            turns.hi[static_cast<size_t>(i)], turns.lo[static_cast<size_t>(i)], c,
                            s);
      want.push_back(static_cast<float>(s));
      want.push_back(static_cast<float>(c));
    }
  }
  gpu::sinusoidal_pe(Storage::f32, pos.data(), got.data(), tokens, d);
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(std::memcmp(&got[k], &want[k], sizeof(float)), 0)
        << "element " << k << ": device " << got[k] << ", host " << want[k];
  }
}

// A pe array one element past an aligned one (two stores per pair instead of one) gives the
// bits of the aligned run.
TEST(GpuSinusoidalPe, UnalignedOutputSameBits) {
  LMO_REQUIRE_KERNELS(GpuKernels);
  const int64_t tokens = 37, d = 70, half = d / 2;
  std::vector<int64_t> pos;
  for (int64_t t = 0; t < tokens; ++t) pos.push_back(t * 7919 + 3);
  const fast::Turns turns = fast::turns_of(fast::inverse_powers(10000.0L, half, d));
  for (Storage fs : fast::kAllStorages) {
    const Storage s = fs;
    const size_t w = fs == Storage::f32 ? 4 : 2, bytes = static_cast<size_t>(tokens * d) * w;
    std::vector<uint8_t> aligned(bytes), shifted(bytes);
    gpu::sinusoidal_pe(s, pos.data(), aligned.data(), tokens, d);
    int64_t* dpos = nullptr;
    double *dhi = nullptr, *dlo = nullptr;
    uint8_t* dpe = nullptr;
    ASSERT_EQ(cudaMalloc(&dpos, pos.size() * sizeof(int64_t)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dhi, static_cast<size_t>(half) * sizeof(double)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dlo, static_cast<size_t>(half) * sizeof(double)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dpe, bytes + w), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dpos, pos.data(), pos.size() * sizeof(int64_t), cudaMemcpyHostToDevice),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dhi, turns.hi.data(), static_cast<size_t>(half) * sizeof(double),
                         cudaMemcpyHostToDevice),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dlo, turns.lo.data(), static_cast<size_t>(half) * sizeof(double),
                         cudaMemcpyHostToDevice),
              cudaSuccess);
    ASSERT_EQ(gpu::launch_sinusoidal_pe(s, dpos, dhi, dlo, dpe + w, tokens, d, nullptr),
              cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(shifted.data(), dpe + w, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    for (void* p : {static_cast<void*>(dpos), static_cast<void*>(dhi), static_cast<void*>(dlo),
                    static_cast<void*>(dpe)}) {
      EXPECT_EQ(cudaFree(p), cudaSuccess);
    }
    EXPECT_TRUE(shifted == aligned) << fast::storage_name(fs);
  }
}

#else
// ---- the CPU build's own: T5's bucket, the same code (kernels::T5Buckets) for both libraries ----

struct BucketRule {
  int64_t num_buckets, max_distance;
  bool bidirectional;
};

std::string name_of(const BucketRule& r) {
  return std::string(r.bidirectional ? "bidirectional" : "causal") + " num_buckets " +
         std::to_string(r.num_buckets) + " max_distance " + std::to_string(r.max_distance);
}

// Every relative position in [−2^20, 2^20] against the reference's exact bucket. The settings:
// T5's own (bidirectional and causal, 32, 128; thresholds 8·2^(m/2) and 16·2^(m/2), exact
// integers at even m), the erratum's (causal 36, 50: 30 = 18·(50/18)^(1/2)), boundaries that are
// all exact integers (bidirectional 32, 2048: 8·2^m; causal 32, 2^20: 16·2^m; causal 16, 3^8·8 =
// 52488: 8·3^m), and an irregular one (bidirectional 64, 1000).
TEST(T5Bucket, BucketEqualsReferenceForEveryPositionWithin2To20) {
  const std::vector<BucketRule> rules = {{32, 128, true},  {32, 128, false},     {36, 50, false},
                                         {32, 2048, true}, {32, 1 << 20, false}, {16, 52488, false},
                                         {64, 1000, true}};
  constexpr int64_t kRange = int64_t{1} << 20;
  for (const BucketRule& r : rules) {
    const fast::T5Buckets fast(r.num_buckets, r.max_distance, r.bidirectional);
    int64_t mismatches = 0;
    for (int64_t rel = -kRange; rel <= kRange; ++rel) {
      const int64_t want =
          ref::t5_relative_position_bucket(rel, r.bidirectional, r.num_buckets, r.max_distance);
      if (fast(rel) != want && mismatches++ < 5) {
        ADD_FAILURE() << name_of(r) << ": relative position " << rel << " bucket " << fast(rel)
                      << ", reference " << want;
      }
    }
    EXPECT_EQ(mismatches, 0) << name_of(r);
  }
}

// Many log buckets: the reference's cost grows with their number (E multiplications of E-power
// integers per call), so the comparison runs where the fast bucket changes: at every threshold
// t_m and at t_m − 1, both directions. The reference's bucket never decreases as n grows (the
// floor of an increasing function), and the fast one is constant between thresholds, so equal
// values on both sides of every threshold mean equal values at every n.
TEST(T5Bucket, BucketEqualsReferenceOnBothSidesOfEveryThreshold) {
  const std::vector<BucketRule> rules = {{1024, int64_t{1} << 40, false},
                                         {2048, 3000, true},
                                         {1000, 999983, false},
                                         {256, int64_t{1} << 53, true}};
  for (const BucketRule& r : rules) {
    const fast::T5Buckets fast(r.num_buckets, r.max_distance, r.bidirectional);
    const int64_t b = r.bidirectional ? r.num_buckets / 2 : r.num_buckets, me = b / 2;
    ASSERT_EQ(static_cast<int64_t>(fast.thresholds().size()), b - me - 1) << name_of(r);
    std::vector<int64_t> ns = {me - 1, me, r.max_distance - 1, r.max_distance};
    for (int64_t t : fast.thresholds()) {
      ns.push_back(t - 1);
      ns.push_back(t);
    }
    for (int64_t n : ns) {
      for (int64_t rel : {-n, n}) {
        ASSERT_EQ(fast(rel), ref::t5_relative_position_bucket(rel, r.bidirectional, r.num_buckets,
                                                              r.max_distance))
            << name_of(r) << ", relative position " << rel;
      }
    }
  }
}

#endif

}  // namespace
}  // namespace lmo::testdata
