// Outputs of at least kStreamBytes (16 MiB) per call are written with non-temporal stores from
// the first 64-byte line boundary on, four vectors at a time (fast/storage-inl.h StoreVectors).
// The values are judged against the reference by the other fast tests on small (ordinary-store)
// calls; here each kernel's large call, at an aligned and at a misaligned output address, must
// write exactly the bytes of the same work done in calls too small to stream (elementwise ops
// in pieces, row ops one row per call): the streamed path, with its head and tail handling,
// changes where bytes go and never a value or an element's place.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "fast/activations.h"
#include "fast/convert.h"
#include "fast/cross_entropy.h"
#include "fast/glu.h"
#include "fast/norms.h"
#include "fast/softcap.h"
#include "fast/softmax.h"
#include "tests/support/fast_cases.h"

namespace lmo::fast {
namespace {

using lmo::testdata::for_each_target;

constexpr int64_t kStreamBytes = int64_t{16} << 20;

// n values in storage s, a fixed hash pattern in [-8, 8) (ordinary numbers, every sign).
std::vector<uint8_t> pattern(Storage s, int64_t n, uint32_t salt) {
  std::vector<float> f(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t h = (static_cast<uint32_t>(i) ^ salt) * 2654435761u;
    f[static_cast<size_t>(i)] = static_cast<float>(h >> 8) * 0x1p-20f - 8.0f;
  }
  std::vector<uint8_t> out(static_cast<size_t>(n) * storage_bytes(s));
  convert(Storage::f32, f.data(), s, out.data(), n);
  return out;
}

// Runs `whole(y)` on an output buffer offset by 0 and by one element from a 64-byte boundary
// and `pieces(y)` on a fresh buffer; the bytes written must agree.
void expect_same_bytes(Storage s, int64_t n, const std::function<void(uint8_t*)>& whole,
                       const std::function<void(uint8_t*)>& pieces, const std::string& where) {
  const size_t bytes = static_cast<size_t>(n) * storage_bytes(s);
  ASSERT_GE(static_cast<int64_t>(bytes), kStreamBytes) << where << ": too small to stream";
  std::vector<uint8_t> want(bytes, 0xA5);
  pieces(want.data());
  for (size_t offset : {size_t{0}, storage_bytes(s)}) {
    std::vector<uint8_t> buf(bytes + 128, 0xA5);
    const uintptr_t base = reinterpret_cast<uintptr_t>(buf.data());
    uint8_t* y = buf.data() + ((64 - base % 64) % 64) + offset;
    whole(y);
    EXPECT_EQ(std::memcmp(y, want.data(), bytes), 0)
        << where << " output offset " << offset << " bytes: streamed bytes differ";
  }
}

int64_t elements_to_stream(Storage s) {
  return kStreamBytes / static_cast<int64_t>(storage_bytes(s)) + 37;
}

TEST(FastStreaming, ElementwiseOps) {
  for (Storage s : kAllStorages) {
    const int64_t n = elements_to_stream(s), piece = n / 5 + 3;
    const size_t w = storage_bytes(s);
    const std::vector<uint8_t> a = pattern(s, n, 1), b = pattern(s, n, 2);
    for_each_target([&](const std::string& target) {
      const std::string where = target + " " + std::string(storage_name(s));
      const auto in_pieces = [&](const std::function<void(int64_t, int64_t, uint8_t*)>& f) {
        return [&, f](uint8_t* y) {
          for (int64_t i = 0; i < n; i += piece) f(i, std::min(piece, n - i), y + i * w);
        };
      };
      expect_same_bytes(
          s, n, [&](uint8_t* y) { softcap(s, a.data(), y, n, 30.0f); },
          in_pieces(
              [&](int64_t i, int64_t k, uint8_t* y) { softcap(s, a.data() + i * w, y, k, 30.0f); }),
          where + " softcap");
      for (Activation act : {Activation::silu, Activation::gelu}) {
        expect_same_bytes(
            s, n, [&](uint8_t* y) { glu_gate(act, s, a.data(), b.data(), y, n); },
            in_pieces([&](int64_t i, int64_t k, uint8_t* y) {
              glu_gate(act, s, a.data() + i * w, b.data() + i * w, y, k);
            }),
            where + " glu_gate " + std::to_string(static_cast<int>(act)));
      }
    });
  }
}

TEST(FastStreaming, RowOps) {
  for (Storage s : kAllStorages) {
    const size_t w = storage_bytes(s);
    for_each_target([&](const std::string& target) {
      const std::string where = target + " " + std::string(storage_name(s));
      // Norms: an odd width, so that rows start at every alignment.
      {
        const int64_t d = 4099, rows = elements_to_stream(s) / d + 1, n = rows * d;
        const std::vector<uint8_t> x = pattern(s, n, 3), g = pattern(s, d, 4),
                                   bt = pattern(s, d, 5);
        for (int kind = 0; kind < 3; ++kind) {
          const auto call = [&](const uint8_t* xr, uint8_t* y, int64_t r) {
            if (kind == 2) {
              layernorm(s, xr, g.data(), bt.data(), y, r, d, 1e-5f);
            } else {
              rmsnorm(s, xr, g.data(), y, r, d, 1e-6f, kind == 1);
            }
          };
          expect_same_bytes(
              s, n, [&](uint8_t* y) { call(x.data(), y, rows); },
              [&](uint8_t* y) {
                for (int64_t r = 0; r < rows; ++r) call(x.data() + r * d * w, y + r * d * w, 1);
              },
              where + " norm kind " + std::to_string(kind));
        }
      }
      // Softmax and cross-entropy (z-loss and soft-cap on) over odd-width rows.
      {
        const int64_t v = 32771, rows = elements_to_stream(s) / v + 1, n = rows * v;
        const std::vector<uint8_t> z = pattern(s, n, 6);
        std::vector<int64_t> target(static_cast<size_t>(rows));
        for (int64_t r = 0; r < rows; ++r) target[static_cast<size_t>(r)] = (r * 7919) % v;
        expect_same_bytes(
            s, n, [&](uint8_t* y) { softmax(s, z.data(), y, rows, v); },
            [&](uint8_t* y) {
              for (int64_t r = 0; r < rows; ++r) {
                softmax(s, z.data() + r * v * w, y + r * v * w, 1, v);
              }
            },
            where + " softmax");
        for (float cap : {0.0f, 30.0f}) {
          std::vector<float> loss(static_cast<size_t>(rows)), logz(loss), loss1(loss), logz1(loss);
          expect_same_bytes(
              s, n,
              [&](uint8_t* y) {
                cross_entropy(s, z.data(), target.data(), rows, v, 1e-4f, cap, loss.data(),
                              logz.data(), y);
              },
              [&](uint8_t* y) {
                for (int64_t r = 0; r < rows; ++r) {
                  cross_entropy(s, z.data() + r * v * w, target.data() + r, 1, v, 1e-4f, cap,
                                loss1.data() + r, logz1.data() + r, y + r * v * w);
                }
              },
              where + " cross_entropy cap " + std::to_string(cap));
          EXPECT_EQ(loss, loss1) << where;
          EXPECT_EQ(logz, logz1) << where;
        }
      }
    });
  }
}

}  // namespace
}  // namespace lmo::fast
