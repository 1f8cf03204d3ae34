// Conversion of an array between storage formats through f32 (exact loads, stores rounded to
// nearest-even): the cast kernel, and the test surface of the SIMD load/store helpers.
#pragma once

#include <cstdint>

#include "fast/storage.h"

namespace lmo::fast {

// dst[i] = src[i] converted from storage `from` to storage `to`, i < n. Throws
// std::invalid_argument for n < 0 or a null pointer with n > 0.
void convert(Storage from, const void* src, Storage to, void* dst, int64_t n);

}  // namespace lmo::fast
