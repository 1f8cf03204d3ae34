#include "oracle/core/row_slice.h"

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

namespace lmo::oracle {
namespace {

std::atomic<int64_t> g_block_elements{int64_t{1} << 22};

}  // namespace

ref::Tensor slice_rows(const ref::Tensor& t, int64_t rows, int64_t begin, int64_t end) {
  if (t.shape().empty() || t.shape()[0] != rows || begin < 0 || begin > end || end > rows) {
    throw std::logic_error("slice_rows: rows [" + std::to_string(begin) + ", " +
                           std::to_string(end) + ") of a tensor without " + std::to_string(rows) +
                           " rows as its leading dimension");
  }
  std::vector<int64_t> shape = t.shape();
  shape[0] = end - begin;
  ref::Tensor s(t.dtype(), shape);
  const size_t row_bytes = t.nbytes() / static_cast<size_t>(rows);
  std::copy_n(
      t.bytes().begin() + static_cast<std::ptrdiff_t>(row_bytes * static_cast<size_t>(begin)),
      s.nbytes(), s.bytes().begin());
  return s;
}

int64_t row_block_elements() { return g_block_elements.load(); }
void set_row_block_elements(int64_t n) { g_block_elements.store(std::max<int64_t>(n, 1)); }
void set_row_block_elements_for_testing(int64_t n) { set_row_block_elements(n); }

int64_t block_for_memory(int64_t bytes) {
  return std::max<int64_t>(1, bytes / kBlockBytesPerElement);
}

namespace {

bool rows_lead(int64_t rows, const std::vector<OutputDecl>& decls) {
  if (rows < 2) return false;
  for (const OutputDecl& d : decls) {
    if (d.topk || d.shape.empty() || d.shape[0] != rows) return false;
  }
  return true;
}

}  // namespace

bool splits_into_rows(const Op& op) { return rows_lead(op.independent_rows(), op.outputs()); }

int64_t rows_per_block(const Op& op, const std::vector<OutputDecl>& decls) {
  const int64_t rows = op.independent_rows();
  if (!rows_lead(rows, decls)) return 0;
  int64_t per_row = 0;
  for (const OutputDecl& d : decls) per_row += ref::checked_numel(d.shape) / rows;
  const int64_t block = row_block_elements();
  if (per_row * rows <= block) return 0;
  return std::max<int64_t>(1, block / std::max<int64_t>(per_row, 1));
}

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
    out.add(name, slice_rows(t, rows, begin, end));
  }
  return out;
}

}  // namespace lmo::oracle
