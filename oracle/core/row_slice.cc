#include "oracle/core/row_slice.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace lmo::oracle {

InputSet row_slice(const Op& op, const InputSet& in, int64_t rows, int64_t begin, int64_t end) {
  InputSet out;
  for (const auto& [name, t] : in.all()) {
    if (!op.row_input(name)) {
      out.add(name, t);
      continue;
    }
    if (t.shape().empty() || t.shape()[0] != rows) {
      throw std::logic_error("row_slice: input " + name +
                             " of an op with independent rows has not " + std::to_string(rows) +
                             " rows");
    }
    std::vector<int64_t> shape = t.shape();
    shape[0] = end - begin;
    ref::Tensor s(t.dtype(), shape);
    const size_t row_bytes = t.nbytes() / static_cast<size_t>(rows);
    std::copy_n(
        t.bytes().begin() + static_cast<std::ptrdiff_t>(row_bytes * static_cast<size_t>(begin)),
        s.nbytes(), s.bytes().begin());
    out.add(name, std::move(s));
  }
  return out;
}

}  // namespace lmo::oracle
