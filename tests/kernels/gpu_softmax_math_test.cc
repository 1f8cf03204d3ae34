// The GPU softmax, log-sum-exp and cross-entropy kernels' f32 per-row math (gpu/softmax_math.h) on
// the host, where no device is needed: the very functions gpu/softmax.cuh runs, compiled by the
// host compiler with -ffp-contract=off (every f32 operation rounded once, as gpu/f32_ops.h's device
// intrinsics round), with the kernel's reduction order: 256 lanes (gpu/common.cuh's kThreads)
// each folding its strided elements, then block_reduce's halving tree. The exponential is a
// stand-in (gpu/f32_math.h): the C library's expf (close to correctly rounded), and BoundedLibm's
// (tests/support/bounded_libm.h), 2 ulp off on every call as CUDA's documented bound allows, up,
// down or either by argument; its double log 1 ulp off. Judged by the oracle's run_and_judge
// (the exact reference, the policy table) under the recipe the gpu backend declares for the
// softmax entry (oracle/backends/gpu_recipes.cc):
//   - the built-in softmax, online_softmax and logsumexp cases in every storage they list;
//   - wide logits (standard deviation 30: most terms underflow, some to subnormals) and rows
//     with NaN, +inf, −inf and all −inf logits;
//   - the built-in cross_entropy cases (the fused loss, log Z and gradient: the f32 path, and the
//     double path of rows with a non-finite logit), wide and soft-capped logits, the z-loss, and
//     rows with NaN, +inf, −inf and all −inf logits; rows split over several blocks (parts of
//     softmax_math::kRowChunk logits: vocabularies of 8193 … 256000), combined as the kernels'
//     three launches combine them;
//   - the inputs of the device's own typed test (tests/kernels/softmax_test.cc: vocabularies of
//     32000, odd widths, masked and special logits, the soft-cap's branches, caps 3e-30 and
//     5e25, zeros and tiny logits under a cap), judged as that test judges them;
//   - mutations that must be caught: the cross-entropy's soft-cap dropped, a store by
//     truncation, the sum missing its last lane's share (a tree one step wrong), the split row's
//     combine dropping its last part's sum, or its parts summed at their own maxima and never
//     rescaled to the row's (a split that forgets a block's maximum). (The maximum is no place for
//     one: softmax and log-sum-exp do not depend on which m is subtracted but through overflow and
//     rounding.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpu/f32_math.h"
#include "gpu/softmax_math.h"
#include "oracle/backends/gpu_recipes.h"
#include "oracle/cases/case.h"
#include "oracle/ops/registry.h"
#include "oracle/ops/softmax.h"
#include "tests/support/bounded_libm.h"
#include "tests/support/float_tensors.h"
#include "tests/support/gpu_block.h"
#include "tests/support/oracle_harness.h"
#include "tests/support/softmax_rows.h"
#include "tests/support/truncating_store.h"

namespace lmo::gpu {
namespace {

using lmo::testing::for_each_library;
using lmo::testing::Harness;
using lmo::testing::Kernel;
namespace block = lmo::testing::gpu_block;

std::optional<oracle::Recipe> declared() {
  return oracle::gpu_declared_recipe(oracle::KernelEntry::kSoftmax);
}

TEST(GpuSoftmaxMath, TheBackendDeclaresStrict) {
  ASSERT_TRUE(declared().has_value());
  EXPECT_EQ(declared()->text(), "strict");
}

// The row is split into parts of softmax_math::kRowChunk logits, one block each: the parts'
// maxima and sums over each block's lanes and tree, combined by parts_max and parts_sum.
// kDropLastPart: the combine forgets the last part's sum; kPartsAtOwnMax: each part sums its
// terms at its own maximum and the combine never rescales them to the row's (a split that forgets
// the other blocks' maxima).
enum class Split { kRight, kDropLastPart, kPartsAtOwnMax };

// m and S of a row of n values zc(j) as the kernels' launches 1 and 2 form them: each part's
// maximum and sum over one block's lanes and tree, combined by parts_max and parts_sum.
// drop_last_lane: the last part's sum without its last lane's share.
template <class L, Split X = Split::kRight, class Z>
void split_max_sum(const Z& zc, int64_t n, float& m, float& s, bool drop_last_lane = false) {
  const int64_t parts = softmax_math::row_parts(n);
  std::vector<float> part_max, part_sum;
  for (int64_t b = 0; b < parts; ++b) {
    const int64_t begin = softmax_math::part_begin(b);
    const int64_t len = softmax_math::part_end(b, n) - begin;
    const auto zp = [&](int64_t j) { return zc(begin + j); };
    part_max.push_back(block::tree_max(block::per_lane(
        [&](int64_t lane) { return softmax_math::strided_max(zp, len, lane, block::kLanes); })));
  }
  m = softmax_math::parts_max(part_max.data(), parts);
  for (int64_t b = 0; b < parts; ++b) {
    const int64_t begin = softmax_math::part_begin(b);
    const int64_t len = softmax_math::part_end(b, n) - begin;
    const auto zp = [&](int64_t j) { return zc(begin + j); };
    const float at = X == Split::kPartsAtOwnMax ? part_max[size_t(b)] : m;
    std::vector<float> lanes = block::per_lane([&](int64_t lane) {
      return softmax_math::strided_exp_sum<L>(zp, len, lane, block::kLanes, at);
    });
    if (drop_last_lane && b == parts - 1) lanes.back() = 0.0f;
    part_sum.push_back(block::tree_sum(std::move(lanes)));
  }
  if (X == Split::kDropLastPart) part_sum.back() = 0.0f;
  s = softmax_math::parts_sum(part_sum.data(), parts);
}

// What a mutant changes in the row statistics.
enum class Mutation { kNone, kDropLastLane };

// A softmax, online_softmax or logsumexp case evaluated as gpu/softmax.cuh does, over library L:
// the f32 results (store_outputs rounds them to the storage, nearest-even, as store_f32 does).
template <class L, Mutation M = Mutation::kNone, Split X = Split::kRight>
oracle::Outputs<double> as_the_kernel(const oracle::RunContext& ctx) {
  const oracle::SoftmaxParams& p = dynamic_cast<const oracle::SoftmaxOp&>(ctx.op).params();
  const std::vector<float> z = lmo::testing::floats(ctx.in.at("z"));
  oracle::Outputs<double> out(1);
  for (int64_t r = 0; r < p.rows; ++r) {
    const auto zr = [&](int64_t j) { return z[static_cast<size_t>(r * p.n + j)]; };
    float m = 0.0f, s = 0.0f;
    split_max_sum<L, X>(zr, p.n, m, s, M == Mutation::kDropLastLane);
    if (p.kind == oracle::SoftmaxKind::kLogsumexp) {
      out[0].values.push_back(softmax_math::log_sum_exp<L>(m, s));
    } else {
      for (int64_t j = 0; j < p.n; ++j) {
        out[0].values.push_back(softmax_math::probability<L>(zr(j), m, s));
      }
    }
  }
  return out;
}

template <class L>
oracle::Outputs<double> entry_as_the_kernel(const oracle::RunContext& ctx);

void expect_passes(Harness& h, const std::string& what) {
  for_each_library([&](auto lib, const char* name) {
    const oracle::VerifyRow row = h.judge(name, entry_as_the_kernel<decltype(lib)>, declared());
    EXPECT_TRUE(row.pass) << what << " " << ref::format_name(h.storage()) << " over " << name
                          << ": " << row.detail;
    EXPECT_EQ(row.recipe, "strict");
  });
}

// gpu/softmax.cuh's cross_entropy_kernel over library L on logits z [rows, n] (stored values,
// widened): loss, logz and the gradient as the kernel forms them in f32 (the kernel then rounds
// the gradient once to the storage).
template <class L, Split X = Split::kRight>
void cross_entropy_rows(const std::vector<float>& z, const std::vector<int64_t>& target,
                        int64_t rows, int64_t n, float lambda_f, float cap,
                        std::vector<float>& loss, std::vector<float>& logz,
                        std::vector<float>& grad) {
  const auto lambda = static_cast<double>(lambda_f);
  for (int64_t r = 0; r < rows; ++r) {
    const auto zr = [&](int64_t j) { return z[static_cast<size_t>(r * n + j)]; };
    const int64_t t = target[static_cast<size_t>(r)];
    bool bad = false;
    for (int64_t j = 0; j < n; ++j) bad = bad || !softmax_math::finite(zr(j));
    if (!bad) {
      const auto zc = [&](int64_t j) { return softmax_math::capped<L>(zr(j), cap); };
      float m = 0.0f, s = 0.0f;
      split_max_sum<L, X>(zc, n, m, s);
      const softmax_math::CrossEntropyRow row = softmax_math::cross_entropy_row<L>(
          static_cast<double>(m), static_cast<double>(s), lambda);
      const double zt = zc(t);
      loss.push_back(softmax_math::cross_entropy_loss(zt, row, lambda));
      logz.push_back(static_cast<float>(row.lse));
      const float k = softmax_math::gradient_factor(row, s);
      for (int64_t j = 0; j < n; ++j) {
        grad.push_back(j == t ? softmax_math::target_gradient<L>(zt, zr(j), cap, row)
                              : softmax_math::gradient<L>(zr(j), cap, m, k));
      }
      continue;
    }
    const double cd = cap;
    const auto zd = [&](int64_t j) {
      return softmax_math::capped_d<L>(static_cast<double>(zr(j)), cd);
    };
    const double m = block::tree_max(block::per_lane(
        [&](int64_t lane) { return softmax_math::strided_max_d(zd, n, lane, block::kLanes); }));
    const double s = block::tree_sum(block::per_lane([&](int64_t lane) {
      return softmax_math::strided_exp_sum_d<L>(zd, n, lane, block::kLanes, m);
    }));
    const softmax_math::CrossEntropyRow row = softmax_math::cross_entropy_row<L>(m, s, lambda);
    loss.push_back(softmax_math::cross_entropy_loss(zd(t), row, lambda));
    logz.push_back(static_cast<float>(row.lse));
    for (int64_t j = 0; j < n; ++j) {
      grad.push_back(j == t ? softmax_math::target_gradient<L>(zd(j), zr(j), cap, row)
                            : softmax_math::gradient_d<L>(zr(j), cd, row));
    }
  }
}

// A cross_entropy case evaluated as the kernel does (the adapters' float λ and cap). kDropCap:
// the mutant that ignores the soft-cap; X: the split's mutants.
template <class L, bool kDropCap = false, Split X = Split::kRight>
oracle::Outputs<double> cross_entropy_as_the_kernel(const oracle::RunContext& ctx) {
  const oracle::SoftmaxParams& p = dynamic_cast<const oracle::SoftmaxOp&>(ctx.op).params();
  std::vector<float> loss, logz, grad;
  cross_entropy_rows<L, X>(lmo::testing::floats(ctx.in.at("z")), ctx.in.ints("target"), p.rows, p.n,
                           static_cast<float>(p.lambda),
                           kDropCap ? 0.0f : static_cast<float>(p.cap), loss, logz, grad);
  oracle::Outputs<double> out(3);
  out[0].values.assign(loss.begin(), loss.end());
  out[1].values.assign(logz.begin(), logz.end());
  out[2].values.assign(grad.begin(), grad.end());
  return out;
}

// The kernel of a softmax-entry case: cross_entropy's or the others'.
template <class L>
oracle::Outputs<double> entry_as_the_kernel(const oracle::RunContext& ctx) {
  const oracle::SoftmaxParams& p = dynamic_cast<const oracle::SoftmaxOp&>(ctx.op).params();
  return p.kind == oracle::SoftmaxKind::kCrossEntropy ? cross_entropy_as_the_kernel<L>(ctx)
                                                      : as_the_kernel<L>(ctx);
}

TEST(GpuSoftmaxMath, BuiltinCasesPassOnTheHost) {
  int judged = 0;
  for (const oracle::Case& c :
       oracle::load_case_file(oracle::builtin_cases_dir() + "/softmax.json")) {
    for (ref::Format f : c.formats) {
      Harness h(c.source, f);
      expect_passes(h, c.id);
      ++judged;
    }
  }
  // softmax and online_softmax in f32, bf16, f16; logsumexp in f32, bf16; cross_entropy: the
  // llama2 vocabulary in f32, bf16, f16, the z-loss and the soft-capped Gemma 2 rows in f32, bf16.
  EXPECT_EQ(judged, 15);
}

nlohmann::json softmax_case(const std::string& op, double std, nlohmann::json inputs = {}) {
  nlohmann::json c = {{"id", "gpu-math/" + op},
                      {"op", op},
                      {"seed", 9200},
                      {"formats", {"f32", "bf16", "f16"}},
                      {"params", {{"rows", 4}, {"n", 3000}, {"logit_std", std}}}};
  if (!inputs.is_null()) c["inputs"] = inputs;
  return c;
}

// Four rows of 3000: row 0 with a NaN, row 1 with a +inf, row 2 with a −inf among finite logits,
// row 3 all −inf.
nlohmann::json special_rows() {
  nlohmann::json specials = {{{"index", 3}, {"value", "nan"}},
                             {{"index", 3000 + 5}, {"value", "pos_inf"}},
                             {{"index", 6000 + 7}, {"value", "neg_inf"}}};
  for (int j = 0; j < 3000; ++j) specials.push_back({{"index", 9000 + j}, {"value", "neg_inf"}});
  return specials;
}

TEST(GpuSoftmaxMath, WideLogitsAndSpecialRowsPassOnTheHost) {
  const nlohmann::json specials = special_rows();
  for (const char* op : {"softmax", "logsumexp"}) {
    for (const char* f : {"f32", "bf16", "f16"}) {
      const ref::Format fmt = *ref::parse_format(f);
      Harness wide(softmax_case(op, 30), fmt);
      expect_passes(wide, std::string(op) + " logit_std 30");
      Harness special(softmax_case(op, 2, {{"z", {{"specials", specials}}}}), fmt);
      expect_passes(special, std::string(op) + " special rows");
    }
  }
}

nlohmann::json cross_entropy_case(double cap, double lambda, double std, nlohmann::json inputs = {},
                                  int64_t vocab = 3000) {
  nlohmann::json c = {{"id", "gpu-math/cross_entropy"},
                      {"op", "cross_entropy"},
                      {"seed", 9201},
                      {"formats", {"f32", "bf16", "f16"}},
                      {"params", {{"rows", 4}, {"vocab", vocab}, {"logit_std", std}}}};
  if (cap > 0) c["params"]["softcap"] = cap;
  if (lambda > 0) c["params"]["z_loss"] = lambda;
  if (!inputs.is_null()) c["inputs"] = inputs;
  return c;
}

TEST(GpuSoftmaxMath, CrossEntropyWideCappedAndSpecialRowsPassOnTheHost) {
  const nlohmann::json specials = special_rows();
  for (const char* f : {"f32", "bf16", "f16"}) {
    const ref::Format fmt = *ref::parse_format(f);
    for (const nlohmann::json& c :
         {cross_entropy_case(0, 0, 30), cross_entropy_case(30, 1e-4, 30),
          cross_entropy_case(5, 0, 2),
          cross_entropy_case(0, 1e-4, 2, {{"z", {{"specials", specials}}}}),
          cross_entropy_case(30, 0, 2, {{"z", {{"specials", specials}}}})}) {
      Harness h(c, fmt);
      expect_passes(h, c.dump().substr(0, 160));
    }
  }
}

// The softmax, log-sum-exp and cross-entropy kernels over library L as a kernel library of the
// kernel contract's shape (gpu/api.h's signatures), evaluated on the host: what the device's own
// typed test (tests/kernels/softmax_test.cc) calls, so that its inputs and judging run here.
template <class L>
struct HostKernels {
  static std::vector<float> widened(ref::DType dt, const void* p, int64_t numel) {
    return lmo::testing::floats_at(dt, p, numel);
  }
  static void store(ref::DType dt, const std::vector<float>& v, void* p) {
    lmo::testing::store_floats(dt, v, p);
  }
  static void softmax(kernels::Storage s, const void* z, void* p, int64_t rows, int64_t n) {
    const std::vector<float> zv = widened(testdata::dtype_of(s), z, rows * n);
    std::vector<float> out;
    for (int64_t r = 0; r < rows; ++r) {
      const auto zr = [&](int64_t j) { return zv[static_cast<size_t>(r * n + j)]; };
      float m = 0.0f, sum = 0.0f;
      split_max_sum<L>(zr, n, m, sum);
      for (int64_t j = 0; j < n; ++j) out.push_back(softmax_math::probability<L>(zr(j), m, sum));
    }
    store(testdata::dtype_of(s), out, p);
  }
  static void logsumexp(kernels::Storage s, const void* z, float* logz, int64_t rows, int64_t n) {
    const std::vector<float> zv = widened(testdata::dtype_of(s), z, rows * n);
    for (int64_t r = 0; r < rows; ++r) {
      const auto zr = [&](int64_t j) { return zv[static_cast<size_t>(r * n + j)]; };
      float m = 0.0f, sum = 0.0f;
      split_max_sum<L>(zr, n, m, sum);
      logz[r] = softmax_math::log_sum_exp<L>(m, sum);
    }
  }
  static void cross_entropy(kernels::Storage s, const void* z, const int64_t* target, int64_t rows,
                            int64_t n, float lambda, float cap, float* loss, float* logz,
                            void* grad) {
    std::vector<float> l, lz, g;
    cross_entropy_rows<L>(widened(testdata::dtype_of(s), z, rows * n),
                          std::vector<int64_t>(target, target + rows), rows, n, lambda, cap, l, lz,
                          g);
    std::copy(l.begin(), l.end(), loss);
    std::copy(lz.begin(), lz.end(), logz);
    if (grad) store(testdata::dtype_of(s), g, grad);
  }
};

using F32 = ref::Sim<ref::Format::f32>;

// tests/kernels/softmax_test.cc's check_softmax and check_ce: the exact values and the naive f32
// run of the reference on the stored inputs, the outputs judged with the policy table.
template <class K>
void check_softmax(kernels::Storage s, const ref::Tensor& z, int64_t rows, int64_t n,
                   const std::string& lib) {
  std::vector<ref::mp> ex_p, ex_l;
  testdata::softmax_rows(z, rows, n, ex_p, ex_l);
  std::vector<F32> f_p, f_l;
  testdata::softmax_rows(z, rows, n, f_p, f_l);
  const std::vector<double> nv_p = testdata::as_doubles(f_p), nv_l = testdata::as_doubles(f_l);
  oracle::GuardedBuffer p(testdata::dtype_of(s), {rows, n}), l(ref::DType::f32, {rows});
  p.arm();
  l.arm();
  K::softmax(s, z.bytes().data(), p.data(), rows, n);
  K::logsumexp(s, z.bytes().data(), static_cast<float*>(l.data()), rows, n);
  const std::string where =
      std::string(kernels::storage_name(s)) + " n=" + std::to_string(n) + " over " + lib;
  testdata::expect_judged("softmax", "", ex_p, p, nv_p, where);
  testdata::expect_judged("logsumexp", "", ex_l, l, nv_l, where);
}

template <class K>
void check_ce(kernels::Storage s, const ref::Tensor& z, int64_t rows, int64_t n, float lambda,
              float cap, uint64_t seed, const std::string& lib) {
  const ref::Tensor tt = testdata::targets(seed, rows, n);
  const std::span<const int64_t> target = tt.as<int64_t>();
  std::vector<ref::mp> ex_loss, ex_logz, ex_grad;
  testdata::loss_rows(z, target, rows, n, lambda, cap, ex_loss, ex_logz, ex_grad);
  std::vector<F32> f_loss, f_logz, f_grad;
  testdata::loss_rows(z, target, rows, n, lambda, cap, f_loss, f_logz, f_grad);
  oracle::GuardedBuffer loss(ref::DType::f32, {rows}), logz(ref::DType::f32, {rows}),
      grad(testdata::dtype_of(s), {rows, n});
  loss.arm();
  logz.arm();
  grad.arm();
  K::cross_entropy(s, z.bytes().data(), target.data(), rows, n, lambda, cap,
                   static_cast<float*>(loss.data()), static_cast<float*>(logz.data()), grad.data());
  const std::string where = std::string(kernels::storage_name(s)) + " n=" + std::to_string(n) +
                            " λ=" + std::to_string(lambda) + " cap=" + std::to_string(cap) +
                            " over " + lib;
  testdata::expect_judged("cross_entropy", "loss", ex_loss, loss, testdata::as_doubles(f_loss),
                          where);
  testdata::expect_judged("cross_entropy", "logz", ex_logz, logz, testdata::as_doubles(f_logz),
                          where);
  testdata::expect_judged("cross_entropy", "grad", ex_grad, grad, testdata::as_doubles(f_grad),
                          where);
}

// softmax_test.cc's KernelSoftmax and KernelCrossEntropy cases, over each library.
template <class L>
void device_test_cases(const std::string& lib) {
  using K = HostKernels<L>;
  using kernels::Storage;
  using testdata::logits;
  for (Storage s : kernels::kAllStorages) {
    check_softmax<K>(s, logits(41, s, 2, 32000, 4.0), 2, 32000, lib);
    check_softmax<K>(s, logits(42, s, 3, 37, 2.0), 3, 37, lib);
    check_softmax<K>(s, logits(43, s, 1, 1, 2.0), 1, 1, lib);
    check_softmax<K>(s, logits(44, s, 2, 257, 2.0), 2, 257, lib);
    check_softmax<K>(s, logits(44, s, 3, 50, 2.0, testdata::softmax_specials()), 3, 50, lib);
    const ref::Tensor z = logits(45, s, 2, 32000, 4.0);
    check_ce<K>(s, z, 2, 32000, 1e-4f, 30.0f, 45, lib);
    check_ce<K>(s, z, 2, 32000, 0.0f, 0.0f, 46, lib);
    check_ce<K>(s, logits(50, s, 2, 4099, 4.0), 2, 4099, 1e-4f, 5.0f, 50, lib);
    const ref::Tensor zs = logits(47, s, 4, 40, 3.0, testdata::cross_entropy_specials());
    check_ce<K>(s, zs, 4, 40, 1e-3f, 0.0f, 47, lib);
    check_ce<K>(s, zs, 4, 40, 1e-3f, 50.0f, 48, lib);
    check_ce<K>(s, logits(49, s, 3, 5, 1.0), 3, 5, 1e-4f, 30.0f, 49, lib);
    const std::vector<oracle::SpecialAt> sp = {{3, oracle::Special::pos_zero},
                                               {33, oracle::Special::neg_zero},
                                               {69, oracle::Special::neg_zero},
                                               {70 + 5, oracle::Special::min_subnormal},
                                               {70 + 40, oracle::Special::min_normal}};
    check_ce<K>(s, logits(51, s, 3, 70, 3.0, sp), 3, 70, 1e-4f, 30.0f, 51, lib);
    check_ce<K>(s, logits(52, s, 3, 70, 3.0, sp), 3, 70, 0.0f, 30.0f, 52, lib);
  }
  for (float cap : {3e-30f, 5e25f}) {
    check_ce<K>(Storage::f32, logits(53, Storage::f32, 2, 1000, 1.5 * cap), 2, 1000, 1e-4f, cap, 53,
                lib);
  }
}

TEST(GpuSoftmaxMath, TheDeviceTestsInputsPassOnTheHost) {
  for_each_library([](auto lib, const char* name) { device_test_cases<decltype(lib)>(name); });
}

// Mutations: each must fail the declared recipe where the correct kernel passes.
void expect_caught(Harness& h, const Kernel& mutant, const std::string& what) {
  const oracle::VerifyRow good = h.judge("gpu-math", entry_as_the_kernel<f32::CudaF32>, declared());
  EXPECT_TRUE(good.pass) << what << ": " << good.detail;
  const oracle::VerifyRow bad = h.judge("mutant", mutant, declared());
  EXPECT_FALSE(bad.pass) << what << ": the mutant passed, max ulp " << bad.max_ulps;
}

TEST(GpuSoftmaxMath, MutationsAreCaught) {
  for (const char* op : {"softmax", "logsumexp"}) {
    Harness f32(softmax_case(op, 2), ref::Format::f32);
    expect_caught(f32, as_the_kernel<f32::CudaF32, Mutation::kDropLastLane>,
                  std::string(op) + ": the sum without its last lane");
  }
  Harness bf16(softmax_case("softmax", 2), ref::Format::bf16);
  expect_caught(
      bf16,
      [](const oracle::RunContext& ctx) {
        oracle::Outputs<double> o = as_the_kernel<f32::CudaF32>(ctx);
        for (double& v : o[0].values) v = lmo::testing::truncated_to_bf16(v);
        return o;
      },
      "softmax stored by truncation");
  // The cross-entropy with its soft-cap dropped (z for cap·tanh(z/cap)), at cap 30 on logits of
  // standard deviation 10 (gemma2-vocab-softcap's).
  Harness capped(cross_entropy_case(30, 0, 10), ref::Format::f32);
  expect_caught(capped, cross_entropy_as_the_kernel<f32::CudaF32, true>,
                "cross_entropy without its soft-cap");
  // The split row's combine: 20000 logits are three parts (8192, 8192, 3616).
  Harness split(cross_entropy_case(0, 1e-4, 2, {}, 20000), ref::Format::f32);
  ASSERT_EQ(softmax_math::row_parts(20000), 3);
  expect_caught(split, cross_entropy_as_the_kernel<f32::CudaF32, false, Split::kDropLastPart>,
                "cross_entropy whose combine drops the last part's sum");
  expect_caught(split, cross_entropy_as_the_kernel<f32::CudaF32, false, Split::kPartsAtOwnMax>,
                "cross_entropy whose parts sum at their own maxima, never rescaled");
}

// Rows of one part, one just over a part, two and three parts, in every storage (the
// cross-entropy with a z-loss and a soft-cap, softmax and log-sum-exp): the split's combine
// passes where the one-block row did.
TEST(GpuSoftmaxMath, SplitRowsPassOnTheHost) {
  EXPECT_EQ(softmax_math::row_parts(softmax_math::kRowChunk), 1);
  EXPECT_EQ(softmax_math::row_parts(softmax_math::kRowChunk + 1), 2);
  EXPECT_EQ(softmax_math::row_parts(128256), 16);
  for (const int64_t vocab : {int64_t{8192}, int64_t{8193}, int64_t{16384}, int64_t{20000}}) {
    for (const char* f : {"f32", "bf16", "f16"}) {
      Harness h(cross_entropy_case(30, 1e-4, 10, {}, vocab), *ref::parse_format(f));
      expect_passes(h, "vocab " + std::to_string(vocab));
      for (const char* op : {"softmax", "logsumexp"}) {
        nlohmann::json c = softmax_case(op, 10);
        c["params"]["n"] = vocab;
        Harness sh(c, *ref::parse_format(f));
        expect_passes(sh, std::string(op) + " n " + std::to_string(vocab));
      }
    }
  }
  // A split softmax whose combine drops its last part's sum.
  nlohmann::json c = softmax_case("softmax", 2);
  c["params"]["n"] = 20000;
  Harness h(c, ref::Format::f32);
  expect_caught(h, as_the_kernel<f32::CudaF32, Mutation::kNone, Split::kDropLastPart>,
                "softmax whose combine drops the last part's sum");
}

}  // namespace
}  // namespace lmo::gpu
