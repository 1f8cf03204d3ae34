#include "oracle/judge/rounded_output.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "oracle/judge/reference_bits.h"
#include "reference/ball_rounding.h"
#include "reference/parallel.h"

namespace lmo::oracle {

ref::Tensor rounded_output(const OutputDecl& d, const OutputValues<ref::mp>& v, ref::Format f) {
  if (d.topk) {
    ref::Tensor t(ref::DType::i64, d.shape);
    for (int64_t i = 0; i < t.numel(); ++i) {
      t.set(i, static_cast<double>(v.indices.at(static_cast<size_t>(i))));
    }
    return t;
  }
  ref::Tensor t(ref::format_dtype(f), d.shape);
  if (static_cast<int64_t>(v.values.size()) != t.numel()) {
    throw std::logic_error("rounded_output: " + std::to_string(v.values.size()) +
                           " values for output " + d.name + " of " + std::to_string(t.numel()) +
                           " elements");
  }
  // Over the reference's threads (check compares a golden file of 5·10^8 elements with it), the
  // narrow formats' bits read off the nearest double where it decides them (reference_bits.h).
  constexpr int64_t kBlock = 1 << 14;
  const bool narrow = ref::spec(f).precision() <= 24;
  ref::parallel_for((t.numel() + kBlock - 1) / kBlock, [&](int64_t b) {
    for (int64_t i = b * kBlock; i < std::min(t.numel(), (b + 1) * kBlock); ++i) {
      const ref::mp& x = v.values[static_cast<size_t>(i)];
      const std::optional<uint64_t> bits =
          narrow ? rounding_of_nearest_double(f, static_cast<double>(x)) : std::nullopt;
      t.set_bits(i, bits ? *bits : ref::encode(f, x));
    }
  });
  return t;
}

void put_rounded(ref::Tensor& t, int64_t offset, const OutputDecl& d, const ExactValues& e,
                 size_t k, ref::Format f) {
  if (d.topk) {
    const std::vector<int64_t>& idx = e.balls ? (*e.balls)[k].indices : e.mp[k].indices;
    for (size_t i = 0; i < idx.size(); ++i) {
      t.set(offset + static_cast<int64_t>(i), static_cast<double>(idx[i]));
    }
    return;
  }
  const auto count =
      static_cast<int64_t>(e.balls ? (*e.balls)[k].values.size() : e.mp[k].values.size());
  constexpr int64_t kBlock = 1 << 16;
  ref::parallel_for((count + kBlock - 1) / kBlock, [&](int64_t b) {
    for (int64_t i = b * kBlock; i < std::min(count, (b + 1) * kBlock); ++i) {
      const auto j = static_cast<size_t>(i);
      t.set_bits(offset + i, e.balls ? ref::decided_bits((*e.balls)[k].values[j], f)
                                     : ref::encode(f, e.mp[k].values[j]));
    }
  });
}

ref::Tensor rounded_output(const OutputDecl& d, const ExactValues& e, size_t k, ref::Format f) {
  ref::Tensor t(d.topk ? ref::DType::i64 : ref::format_dtype(f), d.shape);
  put_rounded(t, 0, d, e, k, f);
  return t;
}

}  // namespace lmo::oracle
