// The elementwise kernels of fast/activations.h, fast/glu.h and fast/softcap.h. Highway
// skeleton: compiled once per target (see fast/targets.cc).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/elementwise.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "fast/activation_dispatch-inl.h"
#include "fast/activations.h"
#include "fast/glu.h"
#include "fast/math-inl.h"
#include "fast/softcap.h"
#include "fast/storage-inl.h"
#include "fast/threads.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {

// Fixed chunks of elements; every element's result depends only on its own inputs.
constexpr int64_t kGrain = 1 << 14;

// The chunk functions are HWY_FLATTEN: GCC otherwise keeps the larger activations (GELU's erfc,
// GELU-tanh) out of line where the loops call them several times (the streamed groups of four,
// the bf16 pairs), and each call reloads its constants.

// Whether an output of n elements of S is large enough to stream (see kStreamBytes).
template <Storage S>
bool StreamOutput(int64_t n) {
  return static_cast<size_t>(n) * sizeof(Elem<S>) >= kStreamBytes;
}

// MapUnary/MapBinary, bf16 through the shuffle-free pairs of fast/storage-inl.h.
template <Storage S, class D, class Fn>
HWY_INLINE void MapUnaryS(D d, const Elem<S>* x, Elem<S>* y, size_t n, const Fn& fn, bool stream) {
  if constexpr (S == Storage::bf16) {
    MapUnaryBf16(d, x, y, n, fn, stream);
  } else {
    MapUnary<S>(d, x, y, n, fn, stream);
  }
}

template <Storage S, class D, class Fn>
HWY_INLINE void MapBinaryS(D d, const Elem<S>* a, const Elem<S>* b, Elem<S>* y, size_t n,
                           const Fn& fn, bool stream) {
  if constexpr (S == Storage::bf16) {
    MapBinaryBf16(d, a, b, y, n, fn, stream);
  } else {
    MapBinary<S>(d, a, b, y, n, fn, stream);
  }
}

void ActivationImpl(Activation act, Storage s, const void* x, void* y, int64_t n) {
  const hn::ScalableTag<float> d;
  WithStorage(s, [&](auto tag) {
    constexpr Storage S = decltype(tag)::value;
    const auto* xs = static_cast<const Elem<S>*>(x);
    auto* ys = static_cast<Elem<S>*>(y);
    WithActivation(act, [&](auto f) {
      parallel_for(n, kGrain, [&](int64_t b, int64_t e) HWY_FLATTEN {
        MapUnaryS<S>(d, xs + b, ys + b, static_cast<size_t>(e - b), f, StreamOutput<S>(n));
      });
    });
  });
}

void GluImpl(Activation act, Storage s, const void* gate, const void* up, void* h, int64_t n) {
  const hn::ScalableTag<float> d;
  WithStorage(s, [&](auto tag) {
    constexpr Storage S = decltype(tag)::value;
    const auto* gs = static_cast<const Elem<S>*>(gate);
    const auto* us = static_cast<const Elem<S>*>(up);
    auto* hs = static_cast<Elem<S>*>(h);
    WithActivation(act, [&](auto f) {
      parallel_for(n, kGrain, [&](int64_t b, int64_t e) HWY_FLATTEN {
        MapBinaryS<S>(
            d, gs + b, us + b, hs + b, static_cast<size_t>(e - b),
            [&](auto dd, auto g, auto u) { return hn::Mul(f(dd, g), u); }, StreamOutput<S>(n));
      });
    });
  });
}

void SoftcapImpl(Storage s, const void* z, void* y, int64_t n, float cap) {
  const hn::ScalableTag<float> d;
  const SoftcapConsts<hn::ScalableTag<float>> c(d, cap);
  WithStorage(s, [&](auto tag) {
    constexpr Storage S = decltype(tag)::value;
    const auto* zs = static_cast<const Elem<S>*>(z);
    auto* ys = static_cast<Elem<S>*>(y);
    parallel_for(n, kGrain, [&](int64_t b, int64_t e) HWY_FLATTEN {
      MapUnaryS<S>(
          d, zs + b, ys + b, static_cast<size_t>(e - b),
          [&](auto dd, auto v) { return SoftcapF(dd, v, c); }, StreamOutput<S>(n));
    });
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <string>

#include "fast/kernel_api.h"

namespace lmo::fast {
HWY_EXPORT(ActivationImpl);
HWY_EXPORT(GluImpl);
HWY_EXPORT(SoftcapImpl);

void activation(Activation act, Storage s, const void* x, void* y, int64_t n) {
  const char* fn = "activation";
  detail::check_activation(fn, act);
  detail::check_storage(fn, s);
  detail::check_count(fn, "n", n, 0);
  detail::check_ptr(fn, "x", x, n > 0);
  detail::check_ptr(fn, "y", y, n > 0);
  HWY_DYNAMIC_DISPATCH(ActivationImpl)(act, s, x, y, n);
}

void glu_gate(Activation act, Storage s, const void* gate, const void* up, void* h, int64_t n) {
  const char* fn = "glu_gate";
  detail::check_activation(fn, act);
  detail::check_storage(fn, s);
  detail::check_count(fn, "n", n, 0);
  detail::check_ptr(fn, "gate", gate, n > 0);
  detail::check_ptr(fn, "up", up, n > 0);
  detail::check_ptr(fn, "h", h, n > 0);
  HWY_DYNAMIC_DISPATCH(GluImpl)(act, s, gate, up, h, n);
}

void softcap(Storage s, const void* z, void* y, int64_t n, float cap) {
  const char* fn = "softcap";
  detail::check_storage(fn, s);
  detail::check_count(fn, "n", n, 0);
  detail::check_cap(fn, cap);
  detail::check_ptr(fn, "z", z, n > 0);
  detail::check_ptr(fn, "y", y, n > 0);
  HWY_DYNAMIC_DISPATCH(SoftcapImpl)(s, z, y, n, cap);
}
}  // namespace lmo::fast
#endif  // HWY_ONCE
