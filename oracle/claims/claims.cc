#include "oracle/claims/claims.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>

#include "oracle/backends/backend.h"
#include "oracle/claims/eval.h"

namespace lmo::oracle {

std::string_view claim_kind_name(ClaimKind k) {
  switch (k) {
    case ClaimKind::kIdentity:
      return "identity";
    case ClaimKind::kBound:
      return "bound";
    case ClaimKind::kCounterexample:
      return "counterexample";
  }
  return "?";
}

std::string_view claim_status_name(ClaimStatus s) {
  switch (s) {
    case ClaimStatus::kHolds:
      return "holds";
    case ClaimStatus::kRefutedAsStated:
      return "refuted as stated";
    case ClaimStatus::kErratumShown:
      return "erratum shown";
    case ClaimStatus::kFails:
      return "FAILS";
  }
  return "?";
}

std::vector<ClaimBackend> claim_backends() {
  std::vector<ClaimBackend> out{{"ref", std::nullopt, nullptr}};
  for (ref::Format f : ref::kAllFormats) {
    out.push_back({"ref-" + std::string(ref::format_name(f)), f, nullptr});
  }
  // The kernel backends: everything available_backends() has beyond the reference ones.
  for (std::unique_ptr<Backend>& b : available_backends()) {
    const std::string name = b->name();
    if (name == "ref" || name.rfind("ref-", 0) == 0) continue;
    out.push_back({name, std::nullopt, std::shared_ptr<Backend>(std::move(b))});
  }
  return out;
}

std::vector<ClaimBackend> resolve_claim_backends(std::string_view name) {
  std::vector<ClaimBackend> out;
  for (ClaimBackend& b : claim_backends()) {
    if (backend_selected_by(name, b.name)) {
      out.push_back(std::move(b));
    }
  }
  return out;
}

std::span<const Claim> claims_registry() {
  static const std::vector<Claim> all = [] {
    std::vector<Claim> v;
    for (auto family : {claims::positional_claims, claims::rope_claims, claims::norm_claims,
                        claims::softmax_claims, claims::attention_claims, claims::count_claims,
                        claims::block_claims, claims::activation_claims, claims::mla_claims,
                        claims::moe_claims}) {
      for (Claim& c : family()) v.push_back(std::move(c));
    }
    // C before E, then by number.
    std::sort(v.begin(), v.end(), [](const Claim& a, const Claim& b) { return a.id < b.id; });
    return v;
  }();
  return all;
}

const Claim* find_claim(std::string_view id) {
  for (const Claim& c : claims_registry()) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

namespace claims {

std::vector<int64_t> uniform_ints(uint64_t seed, const std::string& name, int64_t n, int64_t lo,
                                  int64_t hi) {
  const ref::Tensor t = oracle::uniform_int(seed, name, ref::DType::i64, {n}, lo, hi);
  const auto v = t.as<int64_t>();
  return std::vector<int64_t>(v.begin(), v.end());
}

void IdentityCheck::add_values(const mp& a, const mp& b, double err, const mp& scale) {
  using std::abs;
  using std::isfinite;
  const bool fa = isfinite(a), fb = isfinite(b);
  if (!fa || !fb) {
    // Bitwise: NaN parity and the same infinity are equality; anything else differs.
    if (mode_ == FloatBound::kBitwise && !is_mp_) {
      const bool same = (isnan(a) && isnan(b)) || (!isnan(a) && !isnan(b) && a == b);
      if (!same) {
        ev_.ok = false;
        ev_.ratio = std::numeric_limits<double>::infinity();
      }
      return;
    }
    if (is_mp_) {
      ev_.ok = false;
      ev_.note = "non-finite value in mp";
      return;
    }
    skip("a value overflowed this format");
    return;
  }
  const mp s = scale > 0 ? scale : mp(1);
  const mp diff = abs(a - b);
  const double residual = static_cast<double>(diff / s);
  ev_.residual = std::max(ev_.residual, residual);
  double ratio = 0;
  double bound = 0;
  if (is_mp_) {
    bound = 1e-40;
    ratio = residual / 1e-40;
  } else if (mode_ == FloatBound::kBitwise) {
    ratio = diff == 0 ? 0 : std::numeric_limits<double>::infinity();
  } else {
    bound = static_cast<double>(mp(err) / s);
    ratio = diff == 0 ? 0 : (err > 0 ? static_cast<double>(diff / mp(err))
                                     : std::numeric_limits<double>::infinity());
  }
  if (ratio > 1) ev_.ok = false;
  if (ratio >= ev_.ratio) {
    ev_.ratio = ratio;
    ev_.bound = bound;
  }
}

void IdentityCheck::add_le(const mp& value, double value_error, const mp& limit, const mp& scale) {
  const mp s = scale > 0 ? scale : mp(1);
  const mp excess = value > limit ? mp(value - limit) : mp(0);
  const double residual = static_cast<double>(excess / s);
  ev_.residual = std::max(ev_.residual, residual);
  const double allowed = is_mp_ ? 1e-40 : static_cast<double>(mp(value_error) / s);
  const double ratio = excess == 0 ? 0
                       : allowed > 0 ? residual / allowed
                                     : std::numeric_limits<double>::infinity();
  if (ratio > 1) ev_.ok = false;
  if (ratio >= ev_.ratio) {
    ev_.ratio = ratio;
    ev_.bound = allowed;
  }
}

BackendEvidence IdentityCheck::result() const {
  BackendEvidence e = ev_;
  if (size_mismatch_) {
    e.ok = false;
    e.note = "the two sides have different lengths";
  }
  if (skipped_ > 0) {
    if (e.trials == 0) {
      e.applicable = false;
      e.note = "n/a: " + skip_note_;
    } else if (e.note.empty()) {
      e.note = std::to_string(skipped_) + " trial(s) skipped: " + skip_note_;
    }
  }
  return e;
}

std::string show(const mp& x, int digits) {
  std::ostringstream o;
  o << std::setprecision(digits) << x;
  return o.str();
}

std::string show_vector(const std::vector<mp>& v, size_t max_items) {
  std::string s = "[";
  for (size_t i = 0; i < v.size() && i < max_items; ++i) {
    s += (i ? ", " : "") + show(v[i], 8);
  }
  if (v.size() > max_items) s += ", …";
  return s + "]";
}

mp relative_difference(const mp& a, const mp& b) {
  using std::abs;
  const mp m = std::max({mp(abs(a)), mp(abs(b)), mp("1e-300")});
  return mp(abs(a - b)) / m;
}

}  // namespace claims
}  // namespace lmo::oracle

namespace lmo::oracle::claims {

ClaimEvidence counterexample_evidence(bool found, Counterexample cx, int trials,
                                      ClaimStatus status_if_found, double relative_gap,
                                      std::string summary) {
  ClaimEvidence ev;
  ev.trials = trials;
  ev.status = found ? status_if_found : ClaimStatus::kFails;
  BackendEvidence b;
  b.backend = "ref";
  b.trials = trials;
  b.residual = relative_gap;
  b.ok = found;
  b.note = found ? "counterexample in exact arithmetic (mp)" : "no counterexample found";
  ev.backends.push_back(b);
  if (found) ev.counterexample = std::move(cx);
  ev.summary = std::move(summary);
  return ev;
}

}  // namespace lmo::oracle::claims
