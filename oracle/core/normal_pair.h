// The Box–Muller pair of NormalReal (inputs.h) on double-doubles with one written error bound
// per value, instead of the same formula on balls (one ball operation per step, about 40 of them
// for the sine and cosine series): the generator of every real-shape case's inputs (5·10^8
// values for cross-entropy over Llama 3's vocabulary). The derivation is in normal_pair.cc.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "reference/ball.h"

namespace lmo::oracle {

// Balls around mean + stddev·√(−2 log u1)·(cos θ, sin θ), u1 = (w1 + 1)·2^-64, θ = 2π·w2·2^-64,
// each containing the exact value (and MPFR's, as NormalReal::pair_balls says): relative radii
// near 2^-95 of the terms, wider for u1 close to 1 (log u1 is known to about 2^-97 absolute).
// nullopt where the bound was not derived (the caller then takes the ball formula): u1 = 1,
// mean or stddev not finite, |stddev| < 2^-900.
std::optional<std::array<ref::Ball, 2>> normal_pair_dd(uint64_t w1, uint64_t w2, double mean,
                                                       double stddev);

}  // namespace lmo::oracle
