// The storage formats of the kernels' inputs and outputs (both libraries): f32, and bfloat16 and
// float16 held as their uint16_t bit patterns. The conversions are each library's own (fast/
// storage.h on the CPU; gpu/common.cuh on the device), since both round in their own way to the
// same nearest-even results. Plain C++17: gpu/api.h, which nvcc compiles, includes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace lmo::kernels {

enum class Storage : uint8_t { f32, bf16, f16 };
inline constexpr Storage kAllStorages[] = {Storage::f32, Storage::bf16, Storage::f16};

constexpr size_t storage_bytes(Storage s) { return s == Storage::f32 ? 4 : 2; }
constexpr std::string_view storage_name(Storage s) {
  return s == Storage::f32 ? "f32" : s == Storage::bf16 ? "bf16" : "f16";
}
std::optional<Storage> parse_storage(std::string_view name);

}  // namespace lmo::kernels
