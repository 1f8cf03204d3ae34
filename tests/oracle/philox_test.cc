// Philox4x32-10 against the known-answer vectors published with Random123 (kat_vectors), and
// basic sanity that the map separates nearby counters and keys.
#include "oracle/core/philox.h"

#include <gtest/gtest.h>

#include <set>

namespace lmo::oracle {
namespace {

using Out = std::array<uint32_t, 4>;

TEST(Philox, KnownAnswerZero) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (Out{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
}

TEST(Philox, KnownAnswerAllOnes) {
  EXPECT_EQ(
      philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
      (Out{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
}

TEST(Philox, KnownAnswerPiDigits) {
  EXPECT_EQ(
      philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
      (Out{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

// Philox is a bijection of the counter for each key, so distinct counters must give distinct
// outputs; distinct keys are not guaranteed to, but a collision among a few thousand would mean
// the key is ignored somewhere.
TEST(Philox, DistinctCountersAndKeysGiveDistinctOutputs) {
  std::set<Out> seen;
  int n = 0;
  for (uint32_t w = 0; w < 4; ++w) {
    for (uint32_t v = 0; v < 256; ++v) {
      std::array<uint32_t, 4> ctr = {0, 0, 0, 0};
      ctr[w] = v << (w * 5);          // exercise every word and some high bits
      if (w > 0 && v == 0) continue;  // the all-zero counter is already in
      seen.insert(philox4x32_10(ctr, {0, 0}));
      ++n;
    }
  }
  for (uint32_t k = 1; k < 1024; ++k) {
    seen.insert(philox4x32_10({0, 0, 0, 0}, {k, 0}));
    seen.insert(philox4x32_10({0, 0, 0, 0}, {0, k << 16}));
    n += 2;
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(n));
}

}  // namespace
}  // namespace lmo::oracle
