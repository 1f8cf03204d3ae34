// A minimal dense row-major tensor: a shape and typed storage of raw element bits. Floating
// element types are the project's formats (formats.h); values convert exactly to and from them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reference/formats.h"

namespace lmo::ref {

enum class DType : uint8_t { f64, f32, tf32, bf16, f16, e4m3, e5m2, i64, i32, u8 };

std::string_view dtype_name(DType d);  // the project's names: f64 … e5m2, i64, i32, u8
std::optional<DType> parse_dtype(std::string_view name);
size_t dtype_size(DType d);             // bytes per element (tf32 lives in a 32-bit word)
bool is_float(DType d);
Format dtype_format(DType d);           // precondition: is_float(d)
DType format_dtype(Format f);

// Number of elements of a shape; throws std::invalid_argument on a negative extent or when the
// count (or its size in bytes for `element_size`) would overflow 64 bits.
int64_t checked_numel(std::span<const int64_t> shape, size_t element_size = 1);

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled. Throws std::invalid_argument for a bad shape (see checked_numel).
  Tensor(DType dtype, std::vector<int64_t> shape);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return bytes_.size(); }
  std::span<uint8_t> bytes() { return bytes_; }
  std::span<const uint8_t> bytes() const { return bytes_; }

  // Raw bits of element i (zero-extended; integers as two's complement).
  uint64_t bits(int64_t i) const;
  void set_bits(int64_t i, uint64_t bits);

  // Element i as an exact double (floating dtypes and integers up to 2^53).
  double get(int64_t i) const;
  // Store v rounded to nearest-even in the element format (floating dtypes), or exactly
  // (integers; throws std::invalid_argument when v is not an integer in range).
  void set(int64_t i, double v);

  // Typed view for the native element types (f64, f32, i64, i32, u8); throws on a mismatch.
  template <class T>
  std::span<T> as();
  template <class T>
  std::span<const T> as() const;

  friend bool operator==(const Tensor&, const Tensor&) = default;

 private:
  DType dtype_ = DType::f32;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  std::vector<uint8_t> bytes_;
};

}  // namespace lmo::ref
