#include "bench/memory_workloads.h"

#include <algorithm>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <utility>

#include "bench/workload_state.h"
#include "oracle/backends/kernel_call.h"
#include "oracle/cases/case.h"
#include "oracle/cases/case_inputs.h"
#include "oracle/core/op.h"
#include "oracle/ops/registry.h"

namespace lmo::bench {
namespace {

using oracle::Backend;
using oracle::BenchShape;
using oracle::OpInfo;

struct Found {
  const OpInfo* op;
  const BenchShape* shape;
};

Found find_shape(const std::string& name) {
  for (const OpInfo& o : oracle::op_registry()) {
    for (const BenchShape& b : o.bench) {
      if (b.name == name) return {&o, &b};
    }
  }
  std::string names;
  for (const std::string& n : memory_workload_names()) names += (names.empty() ? "" : ", ") + n;
  throw std::invalid_argument("bench: no workload named '" + name + "'; known: " + names);
}

// The case of the shape at `rows` rows.
oracle::Case bench_case(const Found& w, ref::Format f, int64_t rows) {
  const nlohmann::json c = {{"id", "bench/" + w.shape->name},
                            {"op", w.op->name},
                            {"seed", 1},
                            {"formats", {std::string(ref::format_name(f))}},
                            {"params", w.shape->params(rows)},
                            {"inputs", w.shape->inputs}};
  return oracle::parse_case(c, "bench", w.shape->name);
}

// Rows whose inputs are drawn; larger workloads repeat them. Drawing is exact (a correctly
// rounded normal value costs a logarithm, a root and a sine: oracle/cases/case_inputs.h), seconds
// at 2^25 elements, while the values do not change the traffic.
constexpr int64_t kDrawnElements = int64_t{1} << 16;

// The inputs of case c (rows rows of `row` elements each) in format f: those of its first
// `drawn` rows, generated as verify would, repeated row by row to fill each input that grows
// with the rows (inputs of a fixed size, as a norm's γ, are taken as drawn). Where an input
// does not scale so, the whole case is drawn.
oracle::InputSet bench_inputs(const Found& w, const oracle::Case& c, const oracle::Op& op,
                              ref::Format f, int64_t rows) {
  const int64_t drawn = std::min(rows, std::max<int64_t>(1, kDrawnElements / w.shape->row));
  if (drawn == rows) return oracle::make_inputs(c, op, f);
  const oracle::Case small_case = bench_case(w, f, drawn);
  const oracle::InputSet small = oracle::make_inputs(small_case, *oracle::make_op(small_case), f);
  const std::vector<oracle::InputDecl> decls = oracle::case_inputs(c, op);
  oracle::InputSet out;
  for (size_t k = 0; k < decls.size(); ++k) {
    const ref::Tensor& part = small.at(decls[k].name);
    ref::Tensor t(part.dtype(), decls[k].shape);
    const bool fixed = t.numel() == part.numel();
    if (!fixed && t.numel() * drawn != part.numel() * rows) return oracle::make_inputs(c, op, f);
    const std::span<const uint8_t> from = part.bytes();
    const std::span<uint8_t> to = t.bytes();
    for (size_t at = 0; at < to.size(); at += from.size()) {
      std::copy_n(from.begin(), std::min(from.size(), to.size() - at), to.begin() + at);
    }
    out.add(decls[k].name, std::move(t));
  }
  return out;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s;
  for (int64_t n : shape) s += (s.empty() ? "" : "x") + std::to_string(n);
  return s;
}

// The compulsory traffic of one call, from the declarations alone (nothing drawn or allocated):
// every input the kernel reads, in its dtype (fixed, else the storage format's), and every
// output in its format (i64 indices for a top-k), rounded up to an even count.
int64_t traffic(const Found& w, const oracle::Case& c, const oracle::Op& op, ref::Format f) {
  const std::vector<std::string>& unread = w.shape->unread;
  int64_t bytes = 0;
  for (const oracle::InputDecl& d : oracle::case_inputs(c, op)) {
    if (std::find(unread.begin(), unread.end(), d.name) != unread.end()) continue;
    const size_t size = ref::dtype_size(d.dtype.value_or(ref::format_dtype(f)));
    bytes += ref::checked_numel(d.shape, size) * static_cast<int64_t>(size);
  }
  for (const oracle::OutputDecl& d : op.outputs()) {
    const ref::DType t = d.topk ? ref::DType::i64 : ref::format_dtype(oracle::output_format(d, f));
    bytes +=
        ref::checked_numel(d.shape, ref::dtype_size(t)) * static_cast<int64_t>(ref::dtype_size(t));
  }
  return bytes + bytes % 2;
}

int64_t traffic(const Found& w, ref::Format f, int64_t rows) {
  const oracle::Case c = bench_case(w, f, rows);
  return traffic(w, c, *oracle::make_op(c), f);
}

Workload make(const Found& w, Backend& backend, ref::Format f, int64_t rows) {
  oracle::Case c = bench_case(w, f, rows);
  std::unique_ptr<oracle::Op> op = oracle::make_op(c);
  // Refused before anything is drawn or allocated.
  if (std::string why = backend.unsupported(c, *op, f); !why.empty()) {
    throw std::invalid_argument("bench: " + backend.name() + " does not run " + w.shape->name +
                                " in " + std::string(ref::format_name(f)) + ": " + why);
  }
  Workload out;
  out.name = w.shape->name;
  out.op = w.op->name;
  out.bytes = traffic(w, c, *op, f);
  oracle::InputSet in = bench_inputs(w, c, *op, f, rows);
  auto st = std::make_shared<WorkloadState>(std::move(c), std::move(op), std::move(in), f);
  // The main array (BenchShape::row): the first input, or the first output where that input
  // holds less than a row per row (a write-only op: sinusoidal_pe's positions).
  const ref::Tensor& first = st->in.all().front().second;
  const std::vector<int64_t> main =
      first.numel() >= rows * w.shape->row ? first.shape() : st->op->outputs().front().shape;
  out.shape = shape_text(main);
  out.elements = ref::checked_numel(main, 1);
  BackendCall call = backend_call(std::move(st), backend);
  out.run = std::move(call.run);
  out.check_written = std::move(call.check_written);
  out.state = std::move(call.state);
  return out;
}

}  // namespace

std::vector<std::string> memory_workload_names() {
  std::vector<std::string> names;
  for (const OpInfo& o : oracle::op_registry()) {
    for (const BenchShape& b : o.bench) names.push_back(b.name);
  }
  return names;
}

Workload memory_workload(const std::string& name, Backend& backend, ref::Format f,
                         int64_t elements) {
  const Found w = find_shape(name);
  return make(w, backend, f, std::max<int64_t>(1, elements / w.shape->row));
}

Workload memory_workload_in_cache(const std::string& name, Backend& backend, ref::Format f,
                                  int64_t elements, int64_t max_bytes) {
  // Every workload's traffic is affine in its rows (per-row arrays plus fixed ones such as a
  // norm's gamma and beta): one and two rows give both terms.
  const Found w = find_shape(name);
  const int64_t one = traffic(w, f, 1), per_row = traffic(w, f, 2) - one;
  const int64_t fixed = one - per_row;
  const int64_t most = std::max<int64_t>(1, elements / w.shape->row);
  int64_t rows = std::clamp<int64_t>((max_bytes - fixed) / std::max<int64_t>(per_row, 1), 1, most);
  // The affine count is exact for today's shapes; the loop keeps the bound honest if one's
  // traffic ever grows faster than its rows (or rounds up to an even count).
  while (rows > 1 && traffic(w, f, rows) > max_bytes) --rows;
  return make(w, backend, f, rows);
}

}  // namespace lmo::bench
