#include "oracle/core/sha256.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace lmo::oracle {
namespace {

// FIPS 180-4 section 4.2.2: first 32 bits of the fractional parts of the cube roots of the
// first 64 primes.
constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

// Section 5.3.3: first 32 bits of the fractional parts of the square roots of the first 8 primes.
constexpr std::array<uint32_t, 8> kInit = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                           0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

// The standard is big-endian throughout; assemble words byte by byte so the host order is moot.
uint32_t load_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

std::atomic<bool> g_portable{false};

#if defined(__x86_64__) && defined(__GNUC__)
// The x86 SHA extensions (Intel SHA-NI; AMD since Zen): four rounds per instruction pair,
// golden files of gigabytes hashed at several times the portable speed. The state is held as
// (A, B, E, F) and (C, D, G, H), the order sha256rnds2 takes; the message schedule is
// W[t] = σ1(W[t−2]) + W[t−7] + σ0(W[t−15]) + W[t−16], four words at a time: sha256msg1 adds
// σ0(W[t−15]) to W[t−16], alignr brings W[t−7…t−4], sha256msg2 adds the σ1 terms.
[[gnu::target("sha,sse4.1")]] void compress_ni(std::array<uint32_t, 8>& state, const uint8_t* data,
                                               size_t blocks) {
  const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  const __m128i dcba =
      _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[0])), 0xB1);
  const __m128i efgh =
      _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[4])), 0x1B);
  __m128i abef = _mm_alignr_epi8(dcba, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, dcba, 0xF0);
  for (size_t b = 0; b < blocks; ++b, data += 64) {
    const __m128i abef_in = abef, cdgh_in = cdgh;
    __m128i w[4];
    for (int i = 0; i < 16; ++i) {
      __m128i m;
      if (i < 4) {
        m = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * i)),
                             swap);
      } else {
        const __m128i t = _mm_add_epi32(_mm_sha256msg1_epu32(w[i & 3], w[(i + 1) & 3]),
                                        _mm_alignr_epi8(w[(i + 3) & 3], w[(i + 2) & 3], 4));
        m = _mm_sha256msg2_epu32(t, w[(i + 3) & 3]);
      }
      w[i & 3] = m;
      const __m128i mk =
          _mm_add_epi32(m, _mm_loadu_si128(reinterpret_cast<const __m128i*>(&kRound[4 * i])));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, mk);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(mk, 0x0E));
    }
    abef = _mm_add_epi32(abef, abef_in);
    cdgh = _mm_add_epi32(cdgh, cdgh_in);
  }
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[0]), _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[4]), _mm_alignr_epi8(dchg, feba, 8));
}

// CPUID directly: leaf 7's EBX bit 29 (SHA), leaf 1's ECX bit 19 (SSE4.1). (Clang 14's
// __builtin_cpu_supports does not know "sha".)
bool cpu_has_sha() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 19))) return false;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return (b & (1u << 29)) != 0;
}

bool use_ni() {
  static const bool has = cpu_has_sha();
  return has && !g_portable.load(std::memory_order_relaxed);
}
#else
bool use_ni() { return false; }
#endif

}  // namespace

void use_portable_sha256_for_testing(bool portable) { g_portable.store(portable); }

Sha256::Sha256() : h_(kInit) {}

void Sha256::compress_blocks(const uint8_t* data, size_t blocks) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (use_ni()) return compress_ni(h_, data, blocks);
#endif
  for (size_t b = 0; b < blocks; ++b) compress(data + 64 * b);
}

void Sha256::compress(const uint8_t* block) {
  uint32_t w[64];
  for (int t = 0; t < 16; ++t) w[t] = load_be32(block + 4 * t);
  for (int t = 16; t < 64; ++t) {
    const uint32_t s0 = std::rotr(w[t - 15], 7) ^ std::rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const uint32_t s1 = std::rotr(w[t - 2], 17) ^ std::rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
  for (int t = 0; t < 64; ++t) {
    const uint32_t sum1 = std::rotr(e, 6) ^ std::rotr(e, 11) ^ std::rotr(e, 25);
    const uint32_t ch = (e & f) ^ (~e & g);
    const uint32_t t1 = h + sum1 + ch + kRound[t] + w[t];
    const uint32_t sum0 = std::rotr(a, 2) ^ std::rotr(a, 13) ^ std::rotr(a, 22);
    const uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    const uint32_t t2 = sum0 + maj;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h_[0] += a;
  h_[1] += b;
  h_[2] += c;
  h_[3] += d;
  h_[4] += e;
  h_[5] += f;
  h_[6] += g;
  h_[7] += h;
}

void Sha256::update(std::span<const uint8_t> data) {
  total_bytes_ += data.size();
  size_t i = 0;
  if (buf_len_ > 0) {  // top up a partial block first
    const size_t take = std::min(data.size(), buf_.size() - buf_len_);
    std::memcpy(buf_.data() + buf_len_, data.data(), take);
    buf_len_ += take;
    i = take;
    if (buf_len_ < buf_.size()) return;
    compress_blocks(buf_.data(), 1);
    buf_len_ = 0;
  }
  const size_t blocks = (data.size() - i) / 64;
  compress_blocks(data.data() + i, blocks);
  i += 64 * blocks;
  std::memcpy(buf_.data(), data.data() + i, data.size() - i);
  buf_len_ = data.size() - i;
}

void Sha256::update(std::string_view data) {
  update(std::span(reinterpret_cast<const uint8_t*>(data.data()), data.size()));
}

Sha256Digest Sha256::finish() {
  // Section 5.1.1: a 1 bit, zeros up to 56 mod 64 bytes, then the message length in bits as a
  // 64-bit big-endian integer.
  const uint64_t bit_len = total_bytes_ * 8;
  const uint8_t one = 0x80;
  update(std::span(&one, 1));
  const uint8_t zero = 0;
  while (buf_len_ != 56) update(std::span(&zero, 1));
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(bit_len >> (56 - 8 * i));
  update(std::span(len, 8));
  Sha256Digest out;
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<uint8_t>(h_[i] >> (24 - 8 * j));
  }
  return out;
}

Sha256Digest sha256(std::span<const uint8_t> data) {
  Sha256 s;
  s.update(data);
  return s.finish();
}

Sha256Digest sha256(std::string_view data) {
  Sha256 s;
  s.update(data);
  return s.finish();
}

std::string to_hex(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(2 * bytes.size());
  for (uint8_t b : bytes) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

}  // namespace lmo::oracle
