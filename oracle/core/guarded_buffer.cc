#include "oracle/core/guarded_buffer.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace lmo::oracle {
namespace {

constexpr size_t kAlign = 64;

uint8_t guard_byte(size_t j) { return j % 2 == 0 ? kGuardByteEven : kGuardByteOdd; }

}  // namespace

uint64_t poison_bits(ref::DType d) {
  switch (d) {
    case ref::DType::f64:
      return 0x7FFDA5A5A5A5A5A5;
    case ref::DType::f32:
    case ref::DType::tf32:
      return 0x7FE5A5A5;
    case ref::DType::bf16:
      return 0x7FE5;
    case ref::DType::f16:
      return 0x7EA5;
    case ref::DType::e4m3:
      return 0xFF;
    case ref::DType::e5m2:
      return 0xFD;
    case ref::DType::i64:
      return 0xA5A5A5A5A5A5A5A5;
    case ref::DType::i32:
      return 0xA5A5A5A5;
    case ref::DType::u8:
      return 0xA5;
  }
  throw std::invalid_argument("poison_bits: unknown dtype");
}

bool poison_is_distinctive(ref::DType d) {
  return d != ref::DType::e4m3 && d != ref::DType::e5m2 && d != ref::DType::u8;
}

GuardedBuffer::GuardedBuffer(ref::DType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  numel_ = ref::checked_numel(shape_, ref::dtype_size(dtype_));
  nbytes_ = static_cast<size_t>(numel_) * ref::dtype_size(dtype_);
  storage_.assign(nbytes_ + 2 * kGuardBytes + kAlign - 1, 0);
  const auto base = reinterpret_cast<uintptr_t>(storage_.data()) + kGuardBytes;
  payload_offset_ = kGuardBytes + (kAlign - base % kAlign) % kAlign;
  arm();
}

void GuardedBuffer::arm() {
  uint8_t* p = storage_.data() + payload_offset_;
  for (size_t j = 0; j < kGuardBytes; ++j) {
    p[-static_cast<ptrdiff_t>(kGuardBytes) + static_cast<ptrdiff_t>(j)] = guard_byte(j);
    p[nbytes_ + j] = guard_byte(j);
  }
  const uint64_t poison = poison_bits(dtype_);
  const size_t sz = ref::dtype_size(dtype_);
  for (int64_t i = 0; i < numel_; ++i) {
    std::memcpy(p + static_cast<size_t>(i) * sz, &poison, sz);  // little-endian host
  }
}

uint64_t GuardedBuffer::bits(int64_t i) const {
  if (i < 0 || i >= numel_) throw std::out_of_range("GuardedBuffer::bits: index out of range");
  uint64_t b = 0;
  const size_t sz = ref::dtype_size(dtype_);
  std::memcpy(&b, storage_.data() + payload_offset_ + static_cast<size_t>(i) * sz, sz);
  return b;
}

std::optional<int64_t> GuardedBuffer::guard_breach() const {
  const uint8_t* p = storage_.data() + payload_offset_;
  for (size_t j = 0; j < kGuardBytes; ++j) {
    if (p[nbytes_ + j] != guard_byte(j)) return static_cast<int64_t>(nbytes_ + j);
  }
  for (size_t j = kGuardBytes; j-- > 0;) {  // nearest to the payload first
    const ptrdiff_t off = -static_cast<ptrdiff_t>(kGuardBytes) + static_cast<ptrdiff_t>(j);
    if (p[off] != guard_byte(j)) return static_cast<int64_t>(off);
  }
  return std::nullopt;
}

ref::Tensor GuardedBuffer::tensor() const {
  ref::Tensor t(dtype_, shape_);
  if (nbytes_ > 0) std::memcpy(t.bytes().data(), data(), nbytes_);
  return t;
}

}  // namespace lmo::oracle
