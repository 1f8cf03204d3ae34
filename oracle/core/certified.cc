#include "oracle/core/certified.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "oracle/core/row_slice.h"
#include "reference/ball_rounding.h"
#include "reference/parallel.h"

namespace lmo::oracle {
namespace {

std::atomic<ExactPath> g_path{ExactPath::kCertified};

struct Counters {
  std::atomic<int64_t> certified_ops{0}, fallback_ops{0}, partial_ops{0}, elements{0},
      undecided_elements{0}, undecided_branches{0};
};
Counters g_counters;
std::atomic<double> g_radius_scale{1.0};

bool decides(const ref::Ball& b, double scale, std::span<const ref::Format> formats) {
  if (scale == 1.0) return ref::decides_rounding(b, formats);
  return ref::decides_rounding(ref::Ball::from_parts(b.hi(), b.lo(), b.rad() * scale), formats);
}

void add(std::atomic<int64_t>& c, int64_t n) { c.fetch_add(n, std::memory_order_relaxed); }

// The midpoints as mp, with what the ball run computed besides the values. Converted over the
// reference's threads: at real shapes this loop (three MPFR allocations and an addition per
// element) was a serial stretch between parallel ones, and left most of 16 cores idle.
Outputs<ref::mp> midpoints(const Outputs<ref::Ball>& balls) {
  constexpr int64_t kBlock = 1 << 14;
  Outputs<ref::mp> out(balls.size());
  for (size_t k = 0; k < balls.size(); ++k) {
    const std::vector<ref::Ball>& v = balls[k].values;
    const auto size = static_cast<int64_t>(v.size());
    out[k].values.resize(v.size());
    ref::parallel_for((size + kBlock - 1) / kBlock, [&](int64_t b) {
      for (int64_t i = b * kBlock; i < std::min(size, (b + 1) * kBlock); ++i) {
        out[k].values[static_cast<size_t>(i)] = ref::to_mp(v[static_cast<size_t>(i)]);
      }
    });
    out[k].indices = balls[k].indices;
    out[k].condition = balls[k].condition;
    out[k].error_scale = balls[k].error_scale;
  }
  return out;
}

}  // namespace

void set_exact_path(ExactPath p) { g_path.store(p); }
void scale_radii_for_testing(double factor) { g_radius_scale.store(factor); }
ExactPath exact_path() { return g_path.load(); }

ExactStats exact_stats() {
  return {g_counters.certified_ops.load(),      g_counters.fallback_ops.load(),
          g_counters.partial_ops.load(),        g_counters.elements.load(),
          g_counters.undecided_elements.load(), g_counters.undecided_branches.load()};
}

std::string exact_report() {
  if (exact_path() == ExactPath::kMpfr) return "exact: MPFR only (--exact mpfr)";
  const ExactStats s = exact_stats();
  return "exact: " + std::to_string(s.certified_ops) + " evaluations certified, " +
         std::to_string(s.fallback_ops) + " recomputed in MPFR, " + std::to_string(s.partial_ops) +
         " with the rows of undecided elements recomputed (" +
         std::to_string(s.undecided_elements) + " of " + std::to_string(s.elements) +
         " elements undecided, " + std::to_string(s.undecided_branches) +
         " evaluations with an undecided branch)";
}

namespace {

// The flat indices of the elements whose interval does not decide its rounding, per output, in
// blocks over the reference's threads (at real shapes there are 5·10^8 of them).
std::vector<std::vector<int64_t>> undecided_elements(const Op& op, const Outputs<ref::Ball>& balls,
                                                     std::span<const ref::Format> rounded_to,
                                                     int64_t& n, int64_t& undecided) {
  constexpr int64_t kBlock = 1 << 16;
  const double scale = g_radius_scale.load();
  const std::vector<OutputDecl> decls = op.outputs();
  std::vector<std::vector<int64_t>> which(balls.size());
  n = undecided = 0;
  for (size_t k = 0; k < balls.size(); ++k) {
    const std::vector<ref::Ball>& v = balls[k].values;
    // An output stored in a format of its own is rounded to that one only (and f64).
    const std::optional<ref::Format> own = k < decls.size() ? decls[k].format : std::nullopt;
    const std::span<const ref::Format> formats =
        own ? std::span<const ref::Format>(&*own, 1) : rounded_to;
    const auto size = static_cast<int64_t>(v.size());
    std::vector<std::vector<int64_t>> parts(static_cast<size_t>((size + kBlock - 1) / kBlock));
    ref::parallel_for(static_cast<int64_t>(parts.size()), [&](int64_t b) {
      for (int64_t i = b * kBlock; i < std::min(size, (b + 1) * kBlock); ++i) {
        if (!decides(v[static_cast<size_t>(i)], scale, formats))
          parts[static_cast<size_t>(b)].push_back(i);
      }
    });
    for (const std::vector<int64_t>& p : parts) which[k].insert(which[k].end(), p.begin(), p.end());
    n += size;
    undecided += static_cast<int64_t>(which[k].size());
  }
  return which;
}

// Ops with independent rows: the rows holding an undecided element recomputed in MPFR, each as
// the op over that one row (its exact values are the whole op's, row for row). false: the op's
// rows are not independent.
bool recompute_rows(const Op& op, const InputSet& in,
                    const std::vector<std::vector<int64_t>>& which, Outputs<ref::mp>& out) {
  const int64_t rows = op.independent_rows();
  if (rows < 1) return false;
  std::set<int64_t> undecided_rows;
  for (size_t k = 0; k < which.size(); ++k) {
    const auto per_row = static_cast<int64_t>(out[k].values.size()) / rows;
    for (const int64_t i : which[k]) undecided_rows.insert(i / per_row);
  }
  const std::unique_ptr<Op> one = op.with_rows(1);
  if (!one) return false;
  for (const int64_t r : undecided_rows) {
    const Outputs<ref::mp> row = one->exact(row_slice(op, in, rows, r, r + 1));
    for (size_t k = 0; k < out.size(); ++k) {
      const size_t per_row = row[k].values.size();
      std::copy(
          row[k].values.begin(), row[k].values.end(),
          out[k].values.begin() + static_cast<std::ptrdiff_t>(per_row * static_cast<size_t>(r)));
    }
  }
  return true;
}

}  // namespace

ExactValues exact_values(const Op& op, const InputSet& in,
                         std::span<const ref::Format> rounded_to) {
  if (exact_path() == ExactPath::kMpfr) return {std::nullopt, op.exact(in)};
  // Read before and after: the counter is never reset, so an undecided comparison of this
  // evaluation (on any of its worker threads) cannot go unseen.
  const uint64_t before = ref::ball_undecided();
  std::optional<Outputs<ref::Ball>> balls = op.enclosure(in);
  if (!balls) return {std::nullopt, op.exact(in)};
  if (ref::ball_undecided() != before) {
    // A branch may differ from MPFR's: no element of this run can be trusted.
    add(g_counters.undecided_branches, 1);
    add(g_counters.fallback_ops, 1);
    return {std::nullopt, op.exact(in)};
  }
  int64_t n = 0, undecided = 0;
  const std::vector<std::vector<int64_t>> which =
      undecided_elements(op, *balls, rounded_to, n, undecided);
  add(g_counters.elements, n);
  add(g_counters.undecided_elements, undecided);
  if (undecided > 0) {
    // Ops that can recompute the undecided elements' rows alone do (at real shapes the whole
    // op in MPFR takes hours); the others run entirely in MPFR.
    Outputs<ref::mp> out = midpoints(*balls);
    if (op.exact_elements(in, which, out) || recompute_rows(op, in, which, out)) {
      add(g_counters.partial_ops, 1);
      op.annotate_exact(in, out);
      return {std::nullopt, std::move(out)};
    }
    add(g_counters.fallback_ops, 1);
    return {std::nullopt, op.exact(in)};
  }
  add(g_counters.certified_ops, 1);
  return {std::move(balls), {}};
}

Outputs<ref::mp> exact_outputs_of(const Op& op, const InputSet& in, ExactValues v) {
  if (!v.balls) return std::move(v.mp);
  Outputs<ref::mp> out = midpoints(*v.balls);
  op.annotate_exact(in, out);
  return out;
}

Outputs<ref::mp> exact_outputs(const Op& op, const InputSet& in,
                               std::span<const ref::Format> rounded_to) {
  return exact_outputs_of(op, in, exact_values(op, in, rounded_to));
}

}  // namespace lmo::oracle
