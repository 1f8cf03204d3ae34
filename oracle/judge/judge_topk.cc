// The top-k judge (judge.h, judge_topk): each token's selected experts as a set, against the
// reference's, with ties within the policy's margin (and a group limit's admissible sets)
// allowed.
#include <algorithm>
#include <limits>
#include <optional>
#include <stdexcept>
#include <unordered_set>
#include <vector>

#include "oracle/judge/judge.h"
#include "oracle/judge/verdict_text.h"

namespace lmo::oracle {
namespace {

using namespace verdict_text;

int64_t index_value(ref::DType d, uint64_t b) {
  return d == ref::DType::i64
             ? static_cast<int64_t>(b)
             : static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(b)));
}

// An expert the backend left out, and its score.
struct Unselected {
  int64_t expert = -1;  // -1: none
  mp score = -std::numeric_limits<mp>::infinity();
};

// The best expert the backend left out among those it could have kept (judge.h, judge_topk):
// without a group limit every expert; with one, over the admissible sets of kept groups that
// hold the selection's groups, the set whose best left-out expert is lowest. nullopt, with
// `why`, when no admissible set holds them. An admissible set K has `kept` groups, and every
// dropped group scores at most the group margin above K's lowest, m: it holds every group above
// m + margin, the group of m, the selection's groups (none below m), and the rest from the band
// [m, m + margin]; trying each group as the one of m covers every such set.
std::optional<Unselected> best_unselected(std::span<const mp> row,
                                          const std::unordered_set<int64_t>& have,
                                          const TopkGroups& g, const mp& expert_margin,
                                          std::string& why) {
  const int64_t n = static_cast<int64_t>(row.size()), size = n / g.groups;
  std::vector<Unselected> left(static_cast<size_t>(g.groups));  // best left out, per group
  std::vector<char> selected_group(static_cast<size_t>(g.groups), 0);
  for (int64_t i = 0; i < n; ++i) {
    Unselected& u = left[static_cast<size_t>(i / size)];
    if (have.count(i)) {
      selected_group[static_cast<size_t>(i / size)] = 1;
    } else if (u.expert < 0 || row[static_cast<size_t>(i)] > u.score) {
      u = {i, row[static_cast<size_t>(i)]};
    }
  }
  if (g.groups == 1) return left[0];
  std::vector<mp> score(static_cast<size_t>(g.groups));
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    std::vector<mp> s(row.begin() + grp * size, row.begin() + (grp + 1) * size);
    std::sort(s.begin(), s.end(), [](const mp& a, const mp& b) { return a > b; });
    score[static_cast<size_t>(grp)] = g.top2_sum ? mp(s[0] + s[1]) : s[0];
  }
  const mp margin = (g.top2_sum ? 2 : 1) * expert_margin;
  std::optional<Unselected> best;
  for (int64_t low = 0; low < g.groups; ++low) {
    const mp& m = score[static_cast<size_t>(low)];
    std::vector<char> in(static_cast<size_t>(g.groups), 0);
    int64_t count = 0;
    bool ok = true;
    std::vector<int64_t> band;
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const mp& sg = score[static_cast<size_t>(grp)];
      if (grp == low || sg > m + margin || selected_group[static_cast<size_t>(grp)]) {
        ok = ok && !(sg < m);
        in[static_cast<size_t>(grp)] = 1;
        ++count;
      } else if (!(sg < m)) {
        band.push_back(grp);
      }
    }
    if (!ok || count > g.kept || count + static_cast<int64_t>(band.size()) < g.kept) continue;
    // The band's groups with the lowest best left-out expert fill the set.
    std::sort(band.begin(), band.end(), [&](int64_t a, int64_t b) {
      return left[static_cast<size_t>(a)].score < left[static_cast<size_t>(b)].score;
    });
    for (int64_t j = 0; j < g.kept - count; ++j) {
      in[static_cast<size_t>(band[static_cast<size_t>(j)])] = 1;
    }
    Unselected worst;  // none left out: −∞
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const Unselected& u = left[static_cast<size_t>(grp)];
      if (in[static_cast<size_t>(grp)] && u.score > worst.score) worst = u;
    }
    if (!best || worst.score < best->score) best = worst;
  }
  if (!best) {
    std::string groups;
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      if (selected_group[static_cast<size_t>(grp)]) {
        groups += (groups.empty() ? "" : ", ") + std::to_string(grp);
      }
    }
    why = "the selected experts lie in groups " + groups + ", which no choice of " +
          std::to_string(g.kept) + " kept groups within the group margin " +
          num(static_cast<double>(margin)) + " holds (group scores " +
          (g.top2_sum ? "top-2 sums" : "maxima") + " of the exact selection scores)";
  }
  return best;
}

Verdict judge_topk_rows(const Policy& policy, std::span<const mp> scores, int64_t n_experts,
                        std::span<const int64_t> expected, const ref::Tensor& got,
                        const GuardedBuffer* buf, const TopkGroups& groups) {
  using std::isfinite;
  using std::isnan;
  if (policy.kind != PolicyKind::kTopKSet) {
    throw std::invalid_argument("judge_topk: the policy is not topk_set");
  }
  if (got.dtype() != ref::DType::i64 && got.dtype() != ref::DType::i32) {
    throw std::invalid_argument("judge_topk: expert indices must be i64 or i32, got " +
                                std::string(ref::dtype_name(got.dtype())));
  }
  if (n_experts <= 0 || scores.size() % static_cast<size_t>(n_experts) != 0) {
    throw std::invalid_argument("judge_topk: " + std::to_string(scores.size()) +
                                " scores are not a whole number of rows of " +
                                std::to_string(n_experts) + " experts");
  }
  if (groups.groups < 1 || n_experts % groups.groups != 0 || groups.kept < 1 ||
      groups.kept > groups.groups ||
      (groups.top2_sum && groups.groups > 1 && n_experts / groups.groups < 2)) {
    throw std::invalid_argument("judge_topk: " + std::to_string(groups.kept) + " kept of " +
                                std::to_string(groups.groups) + " groups is not a group limit of " +
                                std::to_string(n_experts) + " experts");
  }
  const int64_t tokens = static_cast<int64_t>(scores.size()) / n_experts;
  const int64_t k = tokens == 0 ? 0 : static_cast<int64_t>(expected.size()) / tokens;
  if (k * tokens != static_cast<int64_t>(expected.size()) || got.numel() != k * tokens) {
    throw std::invalid_argument("judge_topk: " + std::to_string(tokens) + " tokens, " +
                                std::to_string(expected.size()) + " expected and " +
                                std::to_string(got.numel()) + " selected indices");
  }
  Verdict v;
  v.elements = tokens;
  for (int64_t t = 0; t < tokens; ++t) {
    const std::span<const mp> row =
        scores.subspan(static_cast<size_t>(t * n_experts), static_cast<size_t>(n_experts));
    std::unordered_set<int64_t> want;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t e = expected[static_cast<size_t>(t * k + j)];
      if (e < 0 || e >= n_experts || !want.insert(e).second) {
        throw std::invalid_argument("judge_topk: token " + std::to_string(t) +
                                    ": the expected experts are not " + std::to_string(k) +
                                    " distinct indices in [0, " + std::to_string(n_experts) + ")");
      }
    }
    std::unordered_set<int64_t> have;
    std::string bad;
    bool unwritten = false;
    for (int64_t j = 0; j < k && bad.empty() && !unwritten; ++j) {
      const uint64_t b = got.bits(t * k + j);
      if (buf && b == buf->poison()) {
        unwritten = true;
        break;
      }
      const int64_t e = index_value(got.dtype(), b);
      if (e < 0 || e >= n_experts) {
        bad = "expert index " + std::to_string(e) + " is outside [0, " + std::to_string(n_experts) +
              ")";
      } else if (!have.insert(e).second) {
        bad = "expert " + std::to_string(e) + " is selected twice";
      }
    }
    if (unwritten) {
      fail(v, t, FailReason::kUnwritten, "an index was never written (still poison)");
      continue;
    }
    if (!bad.empty()) {
      fail(v, t, FailReason::kPolicy, bad);
      continue;
    }
    bool same = true;
    for (int64_t m : want) same = same && have.count(m) > 0;
    if (same) continue;
    bool has_nan = false;
    mp scale = 0;
    for (const mp& s : row) {
      has_nan = has_nan || isnan(s);
      if (isfinite(s) && abs(s) > scale) scale = abs(s);
    }
    const mp bound = mp(policy.tie_margin) * scale;
    // The backend's lowest selected expert against the best one it could have kept.
    int64_t lowest = -1;
    for (int64_t e : have) {
      if (lowest < 0 || row[static_cast<size_t>(e)] < row[static_cast<size_t>(lowest)]) lowest = e;
    }
    std::string why;
    const std::optional<Unselected> best =
        has_nan ? std::nullopt : best_unselected(row, have, groups, bound, why);
    if (has_nan) why = "a selection score is NaN, and NaN scores never tie";
    if (!best) {
      fail(v, t, FailReason::kPolicy, why);
      continue;
    }
    if (best->expert < 0) continue;  // every expert it could have kept is selected
    const mp diff = best->score - row[static_cast<size_t>(lowest)];
    if (!(diff <= bound)) {
      fail(v, t, FailReason::kPolicy,
           "the backend chose expert " + std::to_string(lowest) + " (score " +
               num(row[static_cast<size_t>(lowest)]) + ") instead of expert " +
               std::to_string(best->expert) + " (score " + num(best->score) +
               "); the tie margin is " + num(static_cast<double>(bound)) + " (" +
               num(policy.tie_margin) + " of the row's largest |score|)");
    }
  }
  return v;
}

}  // namespace

Verdict judge_topk(const Policy& policy, std::span<const mp> scores, int64_t n_experts,
                   std::span<const int64_t> expected, const ref::Tensor& got,
                   const TopkGroups& groups) {
  return judge_topk_rows(policy, scores, n_experts, expected, got, nullptr, groups);
}

Verdict judge_topk(const Policy& policy, std::span<const mp> scores, int64_t n_experts,
                   std::span<const int64_t> expected, const GuardedBuffer& got,
                   const TopkGroups& groups) {
  Verdict v = judge_topk_rows(policy, scores, n_experts, expected, got.tensor(), &got, groups);
  check_guard(v, got);
  return v;
}

}  // namespace lmo::oracle
