// SHA-256 (FIPS 180-4), for content hashes of golden files and generated tensors: a changed bit
// anywhere changes the digest, so a pinned hex string guards a whole tensor.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace lmo::oracle {

using Sha256Digest = std::array<uint8_t, 32>;

// Incremental hasher: feed bytes in any number of pieces, then finish() once.
class Sha256 {
 public:
  Sha256();
  void update(std::span<const uint8_t> data);
  void update(std::string_view data);
  // Pads, processes the last block and returns the digest. The object must not be reused.
  Sha256Digest finish();

 private:
  void compress(const uint8_t* block);
  // The blocks in order: by the x86 SHA extensions where the CPU has them, else compress().
  void compress_blocks(const uint8_t* data, size_t blocks);

  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_{};
  size_t buf_len_ = 0;
  uint64_t total_bytes_ = 0;
};

Sha256Digest sha256(std::span<const uint8_t> data);

// For the test that compares the two implementations: true forces the portable one.
void use_portable_sha256_for_testing(bool portable);
Sha256Digest sha256(std::string_view data);

// Lowercase hexadecimal, two digits per byte, most significant nibble first.
std::string to_hex(std::span<const uint8_t> bytes);
inline std::string sha256_hex(std::span<const uint8_t> data) { return to_hex(sha256(data)); }

}  // namespace lmo::oracle
