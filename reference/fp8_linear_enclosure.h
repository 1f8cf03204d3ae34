// F-fp8 block-scaled linear layer on balls ([certified]): intervals around the exact outputs of
// fp8_linear (fp8_scaling.h), y = dequant(A)·dequant(W)ᵀ, from exact block sums instead of one
// ball operation per product. Within a k-block both operands share one scale each, so
//   y_ij = Σ_c s_A(i, c)·s_W(j, c)·Σ_(t in block c) q_A,it·q_W,jt,
// and the block sums of fp8 products are exact in double (e4m3: products are multiples of 2^-18
// below 2^18, a 128-term sum needs at most 43 bits; every rounding is checked, so e5m2 is exact
// where it is and declined where it is not). The derivation is in fp8_linear_enclosure.cc.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "reference/ball.h"
#include "reference/fp8_scaling.h"

namespace lmo::ref {

// a: A's fp8 values (m × k, row-major, as doubles), a_scales by at; w: W's (n × k) by wt.
// The m × n outputs, or nullopt where this path does not apply and fp8_linear<Ball> must run: the
// two tilings' k-blocks differ, a value or scale is not finite, a block sum or a scale product
// is not exact in double, or a product nears double's underflow.
std::optional<std::vector<Ball>> fp8_linear_enclosure(
    std::span<const double> a, std::span<const double> a_scales, const ScaleTiling& at,
    std::span<const double> w, std::span<const double> w_scales, const ScaleTiling& wt);

}  // namespace lmo::ref
