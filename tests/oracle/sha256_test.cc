// SHA-256 against the FIPS 180-4 / NIST CSRC example digests.
#include "oracle/core/sha256.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lmo::oracle {
namespace {

TEST(Sha256, Abc) {
  EXPECT_EQ(to_hex(sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, Empty) {
  EXPECT_EQ(to_hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

// 56 bytes: the padding no longer fits the first block, so a second, length-only block is made.
TEST(Sha256, TwoBlockMessage448Bits) {
  EXPECT_EQ(to_hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

// FIPS 180-2 appendix B.3. (The digest reads ...f1809a48...; coreutils sha256sum and Python's
// hashlib agree.)
TEST(Sha256, OneMillionA) {
  const std::string a(1000000, 'a');
  EXPECT_EQ(to_hex(sha256(a)), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// The same million bytes fed in uneven pieces (across block boundaries) give the same digest.
TEST(Sha256, IncrementalUpdatesMatchOneShot) {
  const std::string a(1000000, 'a');
  Sha256 h;
  size_t pos = 0;
  for (size_t piece = 1; pos < a.size(); piece = piece * 7 % 997 + 1) {
    const size_t n = std::min(piece, a.size() - pos);
    h.update(std::string_view(a).substr(pos, n));
    pos += n;
  }
  EXPECT_EQ(to_hex(h.finish()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// The x86 SHA-extension path (used where the CPU has it, as by the tests above) and the portable
// one: the published vectors on both, and the same digests for messages of every length around
// the block and padding boundaries and for a few megabytes.
TEST(Sha256, TheSimdAndPortablePathsAgree) {
  std::vector<uint8_t> data(3 << 20);
  uint64_t x = 88172645463325252ull;
  for (uint8_t& b : data) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    b = static_cast<uint8_t>(x);
  }
  std::vector<size_t> lengths = {data.size()};
  for (size_t n = 0; n < 200; ++n) lengths.push_back(n);
  for (const bool portable : {true, false}) {
    use_portable_sha256_for_testing(portable);
    EXPECT_EQ(to_hex(sha256(std::string_view("abc"))),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(to_hex(sha256(std::string(1000000, 'a'))),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  }
  for (const size_t n : lengths) {
    const std::span<const uint8_t> m(data.data(), n);
    use_portable_sha256_for_testing(true);
    const std::string want = to_hex(sha256(m));
    use_portable_sha256_for_testing(false);
    ASSERT_EQ(to_hex(sha256(m)), want) << n << " bytes";
  }
}

TEST(Sha256, HexIsLowercaseTwoDigitsPerByte) {
  const std::vector<uint8_t> b = {0x00, 0x0f, 0xa0, 0xff};
  EXPECT_EQ(to_hex(b), "000fa0ff");
  EXPECT_EQ(sha256_hex(b).size(), 64u);
}

}  // namespace
}  // namespace lmo::oracle
