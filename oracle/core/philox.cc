#include "oracle/core/philox.h"

namespace lmo::oracle {
namespace {

// Round multipliers and key schedule ("Weyl") increments from the paper: the increments are the
// golden ratio and sqrt(3) - 1 as 32-bit fractions.
constexpr uint32_t kMul0 = 0xD2511F53u;
constexpr uint32_t kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u;
constexpr uint32_t kWeyl1 = 0xBB67AE85u;

// One S-box/P-box round: two 32x32->64 products; their high halves are XORed with the other
// two words and the round key, and the words are permuted (0,1,2,3) <- (hi1^.., lo1, hi0^.., lo0).
PhiloxCounter round(const PhiloxCounter& x, const PhiloxKey& k) {
  const uint64_t p0 = uint64_t{kMul0} * x[0];
  const uint64_t p1 = uint64_t{kMul1} * x[2];
  const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
  const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
  return {hi1 ^ x[1] ^ k[0], lo1, hi0 ^ x[3] ^ k[1], lo0};
}

}  // namespace

std::array<uint32_t, 4> philox4x32_10(PhiloxCounter ctr, PhiloxKey key) {
  // The first round uses the key as given; the key is bumped before each of the other nine.
  ctr = round(ctr, key);
  for (int r = 1; r < 10; ++r) {
    key[0] += kWeyl0;  // unsigned: wraps modulo 2^32 as specified
    key[1] += kWeyl1;
    ctr = round(ctr, key);
  }
  return ctr;
}

}  // namespace lmo::oracle
