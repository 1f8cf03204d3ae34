// An input array seen as f32: the caller's pointer itself for f32 storage, else an exact f32
// copy (bf16 and f16 widen exactly), made once per call so that the matrix products (OpenBLAS,
// f32 only) can read it in place.
#pragma once

#include <cstdint>
#include <vector>

#include "fast/convert.h"
#include "fast/storage.h"

namespace lmo::fast::detail {

class F32Operand {
 public:
  F32Operand(Storage s, const void* p, int64_t n) {
    if (s == Storage::f32 || n == 0) {
      ptr_ = static_cast<const float*>(p);
      return;
    }
    copy_.resize(static_cast<size_t>(n));
    convert(s, p, Storage::f32, copy_.data(), n);
    ptr_ = copy_.data();
  }
  const float* get() const { return ptr_; }

 private:
  std::vector<float> copy_;
  const float* ptr_ = nullptr;
};

}  // namespace lmo::fast::detail
