#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reference/tensor.h"

namespace lmo::ref {
namespace {

TEST(Tensor, ShapeSizeAndZeroFill) {
  Tensor t(DType::bf16, {2, 3, 4});
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.nbytes(), 48u);
  for (int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(t.bits(i), 0u);
  Tensor scalar(DType::f32, {});
  EXPECT_EQ(scalar.numel(), 1);
  Tensor empty(DType::f16, {4, 0});
  EXPECT_EQ(empty.numel(), 0);
}

TEST(Tensor, SetRoundsToTheElementFormatAndGetIsExact) {
  Tensor t(DType::bf16, {3});
  t.set(0, 1.0 + std::ldexp(1.0, -8));  // tie: to even (1.0)
  t.set(1, 1.0 + std::ldexp(1.0, -8) * 3);
  t.set(2, -0.0);
  EXPECT_EQ(t.get(0), 1.0);
  EXPECT_EQ(t.get(1), 1.0 + std::ldexp(1.0, -6));
  EXPECT_TRUE(std::signbit(t.get(2)));
  EXPECT_EQ(t.bits(1), 0x3F82u);
  Tensor e(DType::e4m3, {1});
  e.set(0, 1000.0);
  EXPECT_TRUE(std::isnan(e.get(0)));
  Tensor tf(DType::tf32, {1});
  tf.set(0, 1.0 + std::ldexp(1.0, -11) * 1.5);
  EXPECT_EQ(tf.get(0), 1.0 + std::ldexp(1.0, -10));
  EXPECT_EQ(tf.bits(0) & 0x1FFFu, 0u);  // low 13 bits of the binary32 word stay clear
}

TEST(Tensor, IntegersAreStoredExactlyOrRejected) {
  Tensor t(DType::i32, {2});
  t.set(0, -5);
  EXPECT_EQ(t.get(0), -5.0);
  EXPECT_EQ(t.as<int32_t>()[0], -5);
  EXPECT_THROW(t.set(1, 0.5), std::invalid_argument);
  EXPECT_THROW(t.set(1, 3e9), std::invalid_argument);
  Tensor u(DType::u8, {1});
  EXPECT_THROW(u.set(0, 256), std::invalid_argument);
  EXPECT_THROW(u.set(0, std::nan("")), std::invalid_argument);
}

TEST(Tensor, BadShapesAndAccessAreRejected) {
  EXPECT_THROW(Tensor(DType::f32, {-1}), std::invalid_argument);
  EXPECT_THROW(Tensor(DType::f64, {int64_t{1} << 40, int64_t{1} << 30}), std::invalid_argument);
  EXPECT_THROW(checked_numel(std::vector<int64_t>{int64_t{1} << 62}, 8), std::invalid_argument);
  Tensor t(DType::f32, {2});
  EXPECT_THROW((void)t.bits(2), std::out_of_range);
  EXPECT_THROW((void)t.as<double>(), std::invalid_argument);
}

TEST(Tensor, DTypeNames) {
  for (const char* n : {"f64", "f32", "tf32", "bf16", "f16", "e4m3", "e5m2", "i64", "i32", "u8"}) {
    ASSERT_TRUE(parse_dtype(n).has_value()) << n;
    EXPECT_EQ(dtype_name(*parse_dtype(n)), n);
  }
  EXPECT_FALSE(parse_dtype("f8").has_value());
  EXPECT_EQ(dtype_format(DType::e5m2), Format::e5m2);
  EXPECT_EQ(format_dtype(Format::tf32), DType::tf32);
}

}  // namespace
}  // namespace lmo::ref
