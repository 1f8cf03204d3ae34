#include "reference/numeric.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "reference/linalg.h"
#include "reference/parallel.h"

namespace lmo::ref {
namespace {

TEST(Numeric, ConversionsAreExactWideningAndRoundOnceNarrowing) {
  const mp third = mp(1) / 3;
  EXPECT_EQ(from_mp<double>(third), 1.0 / 3.0);  // the CPU's division is correctly rounded
  EXPECT_EQ(from_mp<float>(third), 1.0f / 3.0f);
  EXPECT_EQ(from_mp<bfloat16>(third).bits(), 0x3EABu);
  const float128 q = from_mp<float128>(third);
  EXPECT_LT(abs(to_mp(q) - third), boost::multiprecision::ldexp(mp(1), -114));
  EXPECT_EQ(to_mp(from_mp<float128>(mp("0.1"))), to_mp(float128(1) / 10));
  EXPECT_EQ((convert<float, bfloat16>(bfloat16(1.5))), 1.5f);
  EXPECT_EQ((convert<float16, double>(65520.0)).value(), std::numeric_limits<double>::infinity());
  EXPECT_EQ(to_mp(pi<double>()), mp(3.141592653589793));
}

TEST(Linalg, MatmulAccumulatesInAccLeftToRight) {
  // In bf16 with bf16 accumulation, 256 + 1 + 1 stays 256 at each step; with f32
  // accumulation the sum is 258, which bf16 holds exactly.
  Mat<bfloat16> a(1, 3, {bfloat16(256.0), bfloat16(1.0), bfloat16(1.0)});
  Mat<bfloat16> b(3, 1, {bfloat16(1.0), bfloat16(1.0), bfloat16(1.0)});
  EXPECT_EQ((matmul<bfloat16, bfloat16>(a, b))(0, 0).value(), 256.0);
  EXPECT_EQ((matmul<bfloat16, float>(a, b))(0, 0).value(), 258.0);
  Mat<double> x(2, 2, {1, 2, 3, 4}), y(2, 2, {5, 6, 7, 8});
  EXPECT_EQ(matmul(x, y).data, (std::vector<double>{19, 22, 43, 50}));
  EXPECT_EQ(transpose(x).data, (std::vector<double>{1, 3, 2, 4}));
  EXPECT_THROW(matmul(x, Mat<double>(3, 1)), std::invalid_argument);
}

TEST(Parallel, EveryIndexOnceAndTheSameResultForAnyThreadCount) {
  std::vector<mp> ref_out;
  for (int threads : {1, 2, 3, 8}) {
    set_reference_threads(threads);
    std::vector<mp> out(1000);
    std::vector<std::atomic<int>> hits(1000);
    parallel_for(1000, [&](int64_t i) {
      out[i] = exp(mp(i) / 100);
      hits[i]++;
    });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
    if (ref_out.empty()) ref_out = out;
    EXPECT_EQ(out, ref_out) << threads;
  }
  set_reference_threads(0);
  EXPECT_THROW(parallel_for(10, [](int64_t i) {
                 if (i == 7) throw std::runtime_error("x");
               }),
               std::runtime_error);
}

TEST(Parallel, ALoopInsideABodyRunsOnThatBodysThread) {
  set_reference_threads(4);
  std::vector<std::thread::id> outer(4), inner(16);
  std::vector<std::atomic<int>> hits(16);
  parallel_for(4, [&](int64_t i) {
    outer[i] = std::this_thread::get_id();
    parallel_for(4, [&](int64_t j) {
      inner[i * 4 + j] = std::this_thread::get_id();
      hits[i * 4 + j]++;
    });
  });
  set_reference_threads(0);
  for (int64_t k = 0; k < 16; ++k) {
    EXPECT_EQ(hits[k].load(), 1) << k;
    EXPECT_EQ(inner[k], outer[k / 4]) << k;
  }
  // The outer loop itself still spreads: its four indices ran on four threads.
  EXPECT_EQ(std::set<std::thread::id>(outer.begin(), outer.end()).size(), 4u);
}

TEST(Parallel, ALoopInsideABodyUsesTheThreadsItsOuterLoopLeavesIdle) {
  set_reference_threads(4);
  std::vector<std::thread::id> inner(8);
  std::vector<std::atomic<int>> hits(8);
  parallel_for(2, [&](int64_t i) {
    parallel_for(4, [&](int64_t j) {
      inner[i * 4 + j] = std::this_thread::get_id();
      hits[i * 4 + j]++;
    });
  });
  set_reference_threads(0);
  for (int64_t k = 0; k < 8; ++k) EXPECT_EQ(hits[k].load(), 1) << k;
  // Two outer workers, each with two of the four threads: its inner loop ran on two.
  for (int64_t i = 0; i < 2; ++i) {
    EXPECT_EQ(std::set<std::thread::id>(inner.begin() + i * 4, inner.begin() + i * 4 + 4).size(),
              2u)
        << i;
  }
}

}  // namespace
}  // namespace lmo::ref
