#include "reference/tensor.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace lmo::ref {
namespace {

struct DTypeInfo {
  DType d;
  std::string_view name;
  size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::f64, "f64", 8},  {DType::f32, "f32", 4},   {DType::tf32, "tf32", 4},
    {DType::bf16, "bf16", 2}, {DType::f16, "f16", 2},  {DType::e4m3, "e4m3", 1},
    {DType::e5m2, "e5m2", 1}, {DType::i64, "i64", 8},  {DType::i32, "i32", 4},
    {DType::u8, "u8", 1},
};

template <class T>
constexpr DType native_dtype() {
  if constexpr (std::is_same_v<T, double>) return DType::f64;
  if constexpr (std::is_same_v<T, float>) return DType::f32;
  if constexpr (std::is_same_v<T, int64_t>) return DType::i64;
  if constexpr (std::is_same_v<T, int32_t>) return DType::i32;
  if constexpr (std::is_same_v<T, uint8_t>) return DType::u8;
}

}  // namespace

std::string_view dtype_name(DType d) { return kDTypes[static_cast<int>(d)].name; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const DTypeInfo& i : kDTypes) {
    if (i.name == name) return i.d;
  }
  return std::nullopt;
}

size_t dtype_size(DType d) { return kDTypes[static_cast<int>(d)].size; }

bool is_float(DType d) { return static_cast<int>(d) <= static_cast<int>(DType::e5m2); }

// DType's floating members are declared in the same order as Format's.
Format dtype_format(DType d) {
  if (!is_float(d)) throw std::invalid_argument("dtype_format: not a floating dtype");
  return static_cast<Format>(static_cast<int>(d));
}
DType format_dtype(Format f) { return static_cast<DType>(static_cast<int>(f)); }

int64_t checked_numel(std::span<const int64_t> shape, size_t element_size) {
  int64_t n = 1;
  for (int64_t e : shape) {
    if (e < 0) throw std::invalid_argument("negative extent " + std::to_string(e));
    if (e != 0 && n > std::numeric_limits<int64_t>::max() / e) {
      throw std::invalid_argument("element count overflows 64 bits");
    }
    n *= e;
  }
  if (element_size > 1 &&
      n > std::numeric_limits<int64_t>::max() / static_cast<int64_t>(element_size)) {
    throw std::invalid_argument("byte count overflows 64 bits");
  }
  return n;
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  numel_ = checked_numel(shape_, dtype_size(dtype_));
  bytes_.assign(static_cast<size_t>(numel_) * dtype_size(dtype_), 0);
}

namespace {

// One element's bytes as an integer of its width (little-endian host), each width a fixed-size
// copy the compiler makes a single load or store: a copy of a variable size was a library call
// per element, a tenth of judging at real shapes.
template <class U>
uint64_t load(const uint8_t* p) {
  U v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class U>
void store(uint8_t* p, uint64_t b) {
  const auto v = static_cast<U>(b);
  std::memcpy(p, &v, sizeof v);
}

}  // namespace

uint64_t Tensor::bits(int64_t i) const {
  if (i < 0 || i >= numel_) throw std::out_of_range("Tensor::bits: index out of range");
  const size_t sz = dtype_size(dtype_);
  const uint8_t* p = bytes_.data() + static_cast<size_t>(i) * sz;
  switch (sz) {
    case 1:
      return load<uint8_t>(p);
    case 2:
      return load<uint16_t>(p);
    case 4:
      return load<uint32_t>(p);
    default:
      return load<uint64_t>(p);
  }
}

void Tensor::set_bits(int64_t i, uint64_t b) {
  if (i < 0 || i >= numel_) throw std::out_of_range("Tensor::set_bits: index out of range");
  const size_t sz = dtype_size(dtype_);
  uint8_t* p = bytes_.data() + static_cast<size_t>(i) * sz;
  switch (sz) {
    case 1:
      store<uint8_t>(p, b);
      break;
    case 2:
      store<uint16_t>(p, b);
      break;
    case 4:
      store<uint32_t>(p, b);
      break;
    default:
      store<uint64_t>(p, b);
      break;
  }
}

double Tensor::get(int64_t i) const {
  const uint64_t b = bits(i);
  switch (dtype_) {
    case DType::i64: return static_cast<double>(static_cast<int64_t>(b));
    case DType::i32: return static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(b)));
    case DType::u8: return static_cast<double>(b);
    default: return decode<double>(dtype_format(dtype_), b);
  }
}

void Tensor::set(int64_t i, double v) {
  if (is_float(dtype_)) {
    set_bits(i, encode(dtype_format(dtype_), v));
    return;
  }
  if (!std::isfinite(v) || std::trunc(v) != v) {
    throw std::invalid_argument("Tensor::set: " + std::string(dtype_name(dtype_)) +
                                " element must be an integer");
  }
  switch (dtype_) {
    case DType::i64:
      if (v < -0x1p63 || v >= 0x1p63) throw std::invalid_argument("Tensor::set: i64 out of range");
      set_bits(i, static_cast<uint64_t>(static_cast<int64_t>(v)));
      break;
    case DType::i32:
      if (v < -0x1p31 || v >= 0x1p31) throw std::invalid_argument("Tensor::set: i32 out of range");
      set_bits(i, static_cast<uint32_t>(static_cast<int32_t>(v)));
      break;
    default:
      if (v < 0 || v > 255) throw std::invalid_argument("Tensor::set: u8 out of range");
      set_bits(i, static_cast<uint64_t>(v));
  }
}

template <class T>
std::span<T> Tensor::as() {
  if (dtype_ != native_dtype<T>()) throw std::invalid_argument("Tensor::as: dtype mismatch");
  return {reinterpret_cast<T*>(bytes_.data()), static_cast<size_t>(numel_)};
}
template <class T>
std::span<const T> Tensor::as() const {
  if (dtype_ != native_dtype<T>()) throw std::invalid_argument("Tensor::as: dtype mismatch");
  return {reinterpret_cast<const T*>(bytes_.data()), static_cast<size_t>(numel_)};
}

template std::span<double> Tensor::as<double>();
template std::span<float> Tensor::as<float>();
template std::span<int64_t> Tensor::as<int64_t>();
template std::span<int32_t> Tensor::as<int32_t>();
template std::span<uint8_t> Tensor::as<uint8_t>();
template std::span<const double> Tensor::as<double>() const;
template std::span<const float> Tensor::as<float>() const;
template std::span<const int64_t> Tensor::as<int64_t>() const;
template std::span<const int32_t> Tensor::as<int32_t>() const;
template std::span<const uint8_t> Tensor::as<uint8_t>() const;

}  // namespace lmo::ref
