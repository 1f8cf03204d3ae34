// Argument checks shared by both kernel libraries' entry points (fast/ and gpu/api.h): every
// violation throws std::invalid_argument naming the function, the parameter, its value and the
// expectation, so both libraries refuse the same calls with the same messages.
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/api/activation.h"
#include "kernels/api/storage.h"

namespace lmo::kernels::detail {

inline void check_storage(const char* fn, Storage s) {
  if (s != Storage::f32 && s != Storage::bf16 && s != Storage::f16) {
    throw std::invalid_argument(std::string(fn) + ": storage is " +
                                std::to_string(static_cast<int>(s)) +
                                ", expected f32, bf16 or f16");
  }
}

// count >= min.
inline void check_count(const char* fn, const char* name, int64_t count, int64_t min) {
  if (count < min) {
    throw std::invalid_argument(std::string(fn) + ": " + name + " is " + std::to_string(count) +
                                ", expected >= " + std::to_string(min));
  }
}

// A pointer that must be non-null when the call touches any element.
inline void check_ptr(const char* fn, const char* name, const void* p, bool needed) {
  if (needed && p == nullptr) {
    throw std::invalid_argument(std::string(fn) + ": " + name + " is null");
  }
}

// A matrix dimension passed to OpenBLAS, which takes 32-bit dimensions and leading dimensions.
inline void check_blas_dim(const char* fn, const char* name, int64_t v) {
  if (v >= (int64_t{1} << 31)) {
    throw std::invalid_argument(std::string(fn) + ": " + name + " is " + std::to_string(v) +
                                ", expected < 2^31 (OpenBLAS dimensions)");
  }
}

// One of fast/activations.h's activations.
inline void check_activation(const char* fn, Activation act) {
  if (act != Activation::relu && act != Activation::gelu && act != Activation::gelu_tanh &&
      act != Activation::silu) {
    throw std::invalid_argument(std::string(fn) + ": activation is " +
                                std::to_string(static_cast<int>(act)) +
                                ", expected relu, gelu, gelu_tanh or silu");
  }
}

// eps: finite and >= 0.
inline void check_eps(const char* fn, float eps) {
  if (!(eps >= 0.0f) || std::isinf(eps)) {
    throw std::invalid_argument(std::string(fn) + ": eps is " + std::to_string(eps) +
                                ", expected a finite eps >= 0");
  }
}

// A soft-cap: finite and > 0.
inline void check_cap(const char* fn, float cap) {
  if (!(cap > 0.0f) || std::isinf(cap)) {
    throw std::invalid_argument(std::string(fn) + ": cap is " + std::to_string(cap) +
                                ", expected a finite cap > 0");
  }
}

// Integer positions of the angle kernels (fast/rope.h, fast/sinusoidal_pe.h): each must be exact
// in a double (|p| ≤ 2^53) for the exact product p·f of fast/angles-inl.h.
inline void check_positions(const char* fn, const int64_t* positions, int64_t n) {
  constexpr int64_t kMax = int64_t{1} << 53;
  for (int64_t t = 0; t < n; ++t) {
    if (positions[t] > kMax || positions[t] < -kMax) {
      throw std::invalid_argument(std::string(fn) + ": positions[" + std::to_string(t) + "] is " +
                                  std::to_string(positions[t]) + ", expected |p| <= 2^53");
    }
  }
}

// The arguments of the sinusoidal encoding (fast/sinusoidal_pe.h, gpu/api_positional.h) other
// than the storage: tokens ≥ 0, d even and ≥ 2, base finite and > 1, the pointers when a token is
// written, each position within 2^53.
inline void check_sinusoidal_pe(const char* fn, const int64_t* positions, const void* pe,
                                int64_t tokens, int64_t d, double base) {
  check_count(fn, "tokens", tokens, 0);
  check_count(fn, "d", d, 2);
  if (d % 2 != 0) {
    throw std::invalid_argument(std::string(fn) + ": d is " + std::to_string(d) +
                                ", expected an even width (sin and cos pairs)");
  }
  if (!(base > 1.0) || !std::isfinite(base)) {
    throw std::invalid_argument(std::string(fn) + ": base is " + std::to_string(base) +
                                ", expected a finite base > 1");
  }
  check_ptr(fn, "positions", positions, tokens > 0);
  check_ptr(fn, "pe", pe, tokens > 0);
  check_positions(fn, positions, tokens);
}

// A z-loss weight: finite.
inline void check_lambda(const char* fn, float lambda) {
  if (!std::isfinite(lambda)) {
    throw std::invalid_argument(std::string(fn) + ": lambda is " + std::to_string(lambda) +
                                ", expected a finite value");
  }
}

// Every target[r], r < rows, in [0, vocab).
inline void check_targets(const char* fn, const int64_t* target, int64_t rows, int64_t vocab) {
  for (int64_t r = 0; r < rows; ++r) {
    if (target[r] < 0 || target[r] >= vocab) {
      throw std::invalid_argument(std::string(fn) + ": target[" + std::to_string(r) + "] is " +
                                  std::to_string(target[r]) + ", expected 0 <= target < " +
                                  std::to_string(vocab) + " (vocab)");
    }
  }
}

}  // namespace lmo::kernels::detail
