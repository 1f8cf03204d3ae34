// The error type and the dtype names shared by the safetensors reader and writer.
#include "oracle/golden/safetensors.h"

namespace lmo::oracle {

SafetensorsError::SafetensorsError(std::string file, std::string where, std::string rule)
    : InputError(std::move(file), std::move(where), std::move(rule)) {}

namespace {

struct DTypeName {
  ref::DType d;
  std::string_view name;
};
// Reading maps each name to the first row that has it, so "F32" reads back as f32, never tf32.
constexpr DTypeName kNames[] = {
    {ref::DType::f64, "F64"},      {ref::DType::f32, "F32"}, {ref::DType::tf32, "F32"},
    {ref::DType::bf16, "BF16"},    {ref::DType::f16, "F16"}, {ref::DType::e4m3, "F8_E4M3"},
    {ref::DType::e5m2, "F8_E5M2"}, {ref::DType::i64, "I64"}, {ref::DType::i32, "I32"},
    {ref::DType::u8, "U8"},
};

}  // namespace

std::string_view safetensors_dtype(ref::DType d) {
  for (const DTypeName& n : kNames) {
    if (n.d == d) return n.name;
  }
  throw std::invalid_argument("safetensors_dtype: dtype " + std::to_string(static_cast<int>(d)) +
                              " is not one of ref::DType's values");
}

std::optional<ref::DType> parse_safetensors_dtype(std::string_view name) {
  for (const DTypeName& n : kNames) {
    if (n.name == name) return n.d;
  }
  return std::nullopt;
}

}  // namespace lmo::oracle
