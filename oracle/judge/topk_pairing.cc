#include "oracle/judge/topk_pairing.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace lmo::oracle {

std::optional<std::vector<int64_t>> differing_selection(const ref::Tensor& indices,
                                                        std::span<const int64_t> expected) {
  if (indices.shape().size() != 2 || static_cast<int64_t>(expected.size()) != indices.numel()) {
    throw std::invalid_argument("differing_selection: the selection must have the [tokens, k] "
                                "shape of the expected one");
  }
  const int64_t tokens = indices.shape()[0], k = indices.shape()[1];
  std::vector<int64_t> sorted(static_cast<size_t>(indices.numel()));
  bool differs = false;
  for (int64_t t = 0; t < tokens; ++t) {
    const auto row = sorted.begin() + static_cast<std::ptrdiff_t>(t * k);
    for (int64_t j = 0; j < k; ++j) row[j] = static_cast<int64_t>(indices.get(t * k + j));
    std::sort(row, row + k);
    differs = differs || !std::equal(row, row + k, expected.begin() + t * k);
  }
  if (!differs) return std::nullopt;
  return sorted;
}

ref::Tensor values_in_expected_order(const ref::Tensor& values, const ref::Tensor& indices,
                                     std::span<const int64_t> expected) {
  if (values.shape() != indices.shape() || values.shape().size() != 2 ||
      static_cast<int64_t>(expected.size()) != indices.numel()) {
    throw std::invalid_argument(
        "values_in_expected_order: values, indices and the expected selection must have the "
        "same [tokens, k] shape");
  }
  const int64_t tokens = values.shape()[0], k = values.shape()[1];
  ref::Tensor out = values;
  std::vector<int64_t> slot(static_cast<size_t>(k));
  for (int64_t t = 0; t < tokens; ++t) {
    // slot[j]: where the kernel's j-th expert sits in the expected row (−1: not there).
    bool permutation = true;
    std::vector<bool> taken(static_cast<size_t>(k), false);
    for (int64_t j = 0; j < k && permutation; ++j) {
      const double e = indices.get(t * k + j);
      int64_t at = -1;
      for (int64_t p = 0; p < k; ++p) {
        if (static_cast<double>(expected[static_cast<size_t>(t * k + p)]) == e) at = p;
      }
      permutation = at >= 0 && !taken[static_cast<size_t>(at)];
      if (permutation) taken[static_cast<size_t>(at)] = true;
      slot[static_cast<size_t>(j)] = at;
    }
    if (!permutation) continue;
    for (int64_t j = 0; j < k; ++j) {
      out.set_bits(t * k + slot[static_cast<size_t>(j)], values.bits(t * k + j));
    }
  }
  return out;
}

}  // namespace lmo::oracle
