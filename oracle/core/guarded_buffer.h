// An output buffer for one backend call: the tensor's bytes, poisoned, between two guards.
//
// Layout: [kGuardBytes guard][payload: numel × dtype_size][kGuardBytes guard], the payload
// 64-byte aligned. The guards hold the sentinel A5 5A A5 5A …; the payload is filled with the
// dtype's poison pattern (poison_bits). After the call:
//  - an overrun (or underrun) is any guard byte that changed (guard_breach);
//  - element i is unwritten iff it still holds the poison pattern exactly and, for a dtype
//    whose poison is not distinctive, the reference would not produce that same pattern itself
//    (the judge applies this rule: see poison_is_distinctive).
//
// Poison patterns: quiet NaNs with a payload that no arithmetic produces and no conversion
// writes (the canonical NaNs are 0x7FF8…, 0x7FC00000, 0x7FC0, 0x7E00), so a backend that wrote
// a NaN and one that never wrote are told apart:
//   f64 0x7FFDA5A5A5A5A5A5, f32/tf32 0x7FE5A5A5 (for tf32 the low 13 bits, which no tf32 value
//   sets, are part of the mark), bf16 0x7FE5, f16 0x7EA5.
// fp8 has too few NaN patterns for that: e4m3 has only 0x7F and 0xFF, e5m2 0x7D–0x7F and
// 0xFD–0xFF. The poison is a NaN the format's own rounding never produces (e4m3 0xFF, e5m2 0xFD:
// negative, and ref::nan_bits is positive), but a backend may legitimately write it (−NaN), so
// there it counts as unwritten only where the reference is not NaN.
// Integers: i64 0xA5A5A5A5A5A5A5A5 and i32 0xA5A5A5A5 are negative (never an index or a count);
// u8 0xA5 = 165 is a valid value, so it counts as unwritten only where the reference is not 165.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "reference/tensor.h"

namespace lmo::oracle {

inline constexpr size_t kGuardBytes = 64;
inline constexpr uint8_t kGuardByteEven = 0xA5;  // guard byte j holds 0xA5 for even j
inline constexpr uint8_t kGuardByteOdd = 0x5A;   // and 0x5A for odd j

uint64_t poison_bits(ref::DType d);
// True when no legitimate output equals the poison (f64, f32, tf32, bf16, f16, i64, i32); false
// for e4m3, e5m2 (poison is a NaN a backend may write) and u8 (poison is a valid value).
bool poison_is_distinctive(ref::DType d);

class GuardedBuffer {
 public:
  // Allocates, poisons and guards. Throws std::invalid_argument for a bad shape.
  GuardedBuffer(ref::DType dtype, std::vector<int64_t> shape);
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;
  GuardedBuffer(GuardedBuffer&&) = default;
  GuardedBuffer& operator=(GuardedBuffer&&) = default;

  // Re-poisons the payload and rewrites both guards: call before every backend call that
  // reuses the buffer.
  void arm();

  // The payload, for the backend (64-byte aligned; nbytes() bytes).
  void* data() { return storage_.data() + payload_offset_; }
  const void* data() const { return storage_.data() + payload_offset_; }

  // The whole guarded region, [front guard | payload | back guard], kGuardBytes + nbytes() +
  // kGuardBytes bytes with the payload at offset kGuardBytes. A device backend copies the region
  // to the device, lets the kernel write at offset kGuardBytes, and copies the region back, so
  // that device-side overruns reach the guards too.
  std::span<uint8_t> region() {
    return {storage_.data() + payload_offset_ - kGuardBytes, nbytes_ + 2 * kGuardBytes};
  }

  ref::DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return nbytes_; }
  uint64_t poison() const { return poison_bits(dtype_); }

  uint64_t bits(int64_t i) const;  // raw bits of payload element i (zero-extended)
  bool is_poison(int64_t i) const { return bits(i) == poison(); }

  // The first changed guard byte as an offset from the payload start: negative before it,
  // ≥ nbytes() after it; nullopt when both guards are intact. The after-guard is scanned first.
  std::optional<int64_t> guard_breach() const;
  bool guard_intact() const { return !guard_breach().has_value(); }

  // A copy of the payload as a tensor of the buffer's dtype and shape.
  ref::Tensor tensor() const;

 private:
  ref::DType dtype_;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  size_t nbytes_ = 0;
  size_t payload_offset_ = 0;
  std::vector<uint8_t> storage_;
};

}  // namespace lmo::oracle
