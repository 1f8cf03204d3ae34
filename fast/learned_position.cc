// The learned position embedding kernel of fast/learned_position.h. Highway skeleton: compiled
// once per target (see fast/targets.cc). Each token's row is MapRow's elementwise f32 addition of
// its two table rows (fast/reduce-inl.h: bf16 through the shuffle-free pairs), every element
// through the same vector code wherever the row's tail falls.
// clang-format off: the skeleton's first lines must stay in this order.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/learned_position.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

#include <algorithm>

#include "fast/learned_position.h"
#include "fast/reduce-inl.h"
#include "fast/storage-inl.h"
#include "fast/threads.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {

template <Storage S>
void EmbedRows(const Elem<S>* token_table, const Elem<S>* position_table, const int64_t* token_ids,
               const int64_t* positions, Elem<S>* h, int64_t tokens, size_t d) {
  const hn::ScalableTag<float> df;
  // About 8 K elements per chunk: a chunk's cost is its rows' reads, independent of the
  // thread count.
  const int64_t grain = std::max<int64_t>(1, 8192 / static_cast<int64_t>(d));
  parallel_for(tokens, grain, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      MapRow<S>(df, token_table + static_cast<size_t>(token_ids[t]) * d,
                position_table + static_cast<size_t>(positions[t]) * d,
                h + static_cast<size_t>(t) * d, d, [](auto v, auto u) { return hn::Add(v, u); });
    }
  });
}

void LearnedPosition(Storage s, const void* token_table, const void* position_table,
                     const int64_t* token_ids, const int64_t* positions, void* h, int64_t tokens,
                     int64_t d) {
  WithStorage(s, [&](auto tag) {
    constexpr Storage S = decltype(tag)::value;
    EmbedRows<S>(static_cast<const Elem<S>*>(token_table),
                 static_cast<const Elem<S>*>(position_table), token_ids, positions,
                 static_cast<Elem<S>*>(h), tokens, static_cast<size_t>(d));
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "fast/kernel_api.h"

namespace lmo::fast {
HWY_EXPORT(LearnedPosition);

void learned_position(Storage s, const void* token_table, int64_t vocab, const void* position_table,
                      int64_t max_positions, const int64_t* token_ids, const int64_t* positions,
                      void* h, int64_t tokens, int64_t d) {
  const char* fn = "learned_position";
  detail::check_storage(fn, s);
  detail::check_learned_position(fn, token_table, vocab, position_table, max_positions, token_ids,
                                 positions, h, tokens, d);
  if (tokens == 0) return;
  HWY_DYNAMIC_DISPATCH(LearnedPosition)
  (s, token_table, position_table, token_ids, positions, h, tokens, d);
}

}  // namespace lmo::fast
#endif  // HWY_ONCE
