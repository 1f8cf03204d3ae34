// Highway skeleton: compiled once per target (see fast/targets.cc).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/convert.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "fast/convert.h"
#include "fast/storage-inl.h"
#include "fast/threads.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {

template <Storage From, Storage To>
void ConvertRange(const Elem<From>* src, Elem<To>* dst, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) StoreF<To>(d, LoadF<From>(d, src + i), dst + i);
  if (i < n) StoreTailF<To>(d, LoadTailF<From>(d, src + i, n - i, 0.0f), dst + i, n - i);
}

void Convert(Storage from, const void* src, Storage to, void* dst, int64_t n) {
  WithStorage(from, [&](auto ft) {
    WithStorage(to, [&](auto tt) {
      constexpr Storage F = decltype(ft)::value;
      constexpr Storage T = decltype(tt)::value;
      const auto* s = static_cast<const Elem<F>*>(src);
      auto* t = static_cast<Elem<T>*>(dst);
      parallel_for(n, 1 << 16, [&](int64_t b, int64_t e) {
        ConvertRange<F, T>(s + b, t + b, static_cast<size_t>(e - b));
      });
    });
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "fast/kernel_api.h"

namespace lmo::fast {
HWY_EXPORT(Convert);

void convert(Storage from, const void* src, Storage to, void* dst, int64_t n) {
  detail::check_storage("convert", from);
  detail::check_storage("convert", to);
  detail::check_count("convert", "n", n, 0);
  detail::check_ptr("convert", "src", src, n > 0);
  detail::check_ptr("convert", "dst", dst, n > 0);
  HWY_DYNAMIC_DISPATCH(Convert)(from, src, to, dst, n);
}
}  // namespace lmo::fast
#endif  // HWY_ONCE
