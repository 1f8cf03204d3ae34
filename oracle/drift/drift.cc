#include "oracle/drift/drift.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "oracle/core/case_error.h"
#include "oracle/drift/support.h"
#include "oracle/core/inputs.h"
#include "oracle/judge/metrics.h"
#include "oracle/backends/system_info.h"

namespace lmo::oracle {

using ref::mp;

void DriftAccumulator::add(const mp& exact, double got) {
  add_bits(exact, ref::encode(format_, got));
}

namespace {

// encode(f, exact) from x = exact rounded to double. Rounding x to f gives the correctly rounded
// value of exact unless x lies exactly on a rounding midpoint of f (monotone rounding: exact and
// x are on the same side of every midpoint, which f's precision + 1 ≤ 53 bits make a double);
// only then is the exact value consulted.
uint64_t reference_bits(ref::Format f, const mp& exact, double x) {
  const uint64_t r = ref::encode(f, x);
  if (ref::bits_is_inf(f, r) || ref::bits_is_nan(f, r)) return ref::encode(f, exact);
  const double v = ref::decode<double>(f, r);
  if (v == x) return r;
  const int64_t n = ordinal(f, r) + (x > v ? 1 : -1);
  // Past the largest finite value the midpoint is the overflow threshold: let mp decide.
  if (std::abs(n) > ordinal(f, ref::max_finite_bits(f))) return ref::encode(f, exact);
  const uint64_t other = from_ordinal(f, n);
  const double mid = v / 2 + ref::decode<double>(f, other) / 2;  // exact: both are f values
  return mid == x ? ref::encode(f, exact) : r;
}

}  // namespace

void DriftAccumulator::add_bits(const mp& exact, uint64_t got_bits) {
  using boost::multiprecision::isfinite;
  if (!isfinite(exact)) return;
  if (ref::bits_is_nan(format_, got_bits) || ref::bits_is_inf(format_, got_bits)) {
    ++nonfinite_;
    return;
  }
  const double x = static_cast<double>(exact);
  // err and the normwise sums in long double: squares of values near the bottom of double's
  // range (10^-160) would vanish in double.
  long double err = 0, xl = x;  // xl: the exact value as the error was measured against
  double rel = 0;
  uint64_t reference = 0;
  if (format_ == ref::Format::f64 || !std::isfinite(x) || (exact != 0 && !std::isnormal(x))) {
    // f64 outputs need the error measured against the exact value, not its double; so do exact
    // values outside the normal range of double (GELU(−40) ≈ 10^-350 is 0 as a double).
    reference = ref::encode(format_, exact);
    err = static_cast<long double>(abs_error(format_, exact, got_bits));
    xl = static_cast<long double>(exact);
    rel = static_cast<double>(rel_error(format_, exact, got_bits));
  } else {
    // Formats of at most 24 bits: x differs from exact by at most |exact|·2^-53, so the error
    // |y − x| moves by at most that and the relative error by at most 2^-53, far below the
    // 2^-24 unit roundoff of the widest format on this path; no reported figure changes beyond
    // that, and the path avoids four mp operations per element.
    reference = reference_bits(format_, exact, x);
    const double y = ref::decode<double>(format_, got_bits);
    const double e = std::fabs(y - x);
    err = e;
    rel = x == 0 ? (e == 0 ? 0.0 : std::numeric_limits<double>::infinity()) : e / std::fabs(x);
  }
  // A finite exact value beyond the format's range has an infinite correctly rounded reference:
  // no ulp distance to a finite output, only its relative error.
  if (!ref::bits_is_inf(format_, reference) && !ref::bits_is_nan(format_, reference)) {
    const double u = std::fabs(static_cast<double>(ulp_distance(format_, reference, got_bits)));
    max_ulps_ = std::max(max_ulps_, u);
    sum_ulps_ += u;
  }
  max_rel_ = std::max(max_rel_, rel);
  sum_sq_err_ += err * err;
  sum_sq_exact_ += xl * xl;
  ++compared_;
}

void DriftAccumulator::merge(const DriftAccumulator& o) {
  compared_ += o.compared_;
  nonfinite_ += o.nonfinite_;
  max_ulps_ = std::max(max_ulps_, o.max_ulps_);
  sum_ulps_ += o.sum_ulps_;
  sum_sq_err_ += o.sum_sq_err_;
  sum_sq_exact_ += o.sum_sq_exact_;
  max_rel_ = std::max(max_rel_, o.max_rel_);
}

DriftStats DriftAccumulator::result() const {
  DriftStats s;
  s.compared = compared_;
  s.nonfinite = nonfinite_;
  s.max_ulps = max_ulps_;
  s.mean_ulps = compared_ > 0 ? sum_ulps_ / static_cast<double>(compared_) : 0;
  s.max_rel = nonfinite_ > 0 ? std::numeric_limits<double>::infinity() : max_rel_;
  s.sig_bits = significant_bits(format_, mp(s.max_rel));
  const double inf = std::numeric_limits<double>::infinity();
  s.norm_rel = nonfinite_ > 0      ? inf
               : sum_sq_exact_ > 0 ? std::sqrt(sum_sq_err_ / sum_sq_exact_)
               : sum_sq_err_ > 0   ? inf
                                   : 0.0;
  return s;
}

const std::vector<DriftAudit>& drift_audits() {
  static const std::vector<DriftAudit> audits = {
      {"rope-position",
       "RoPE vs position 1 … 2^20 at base 1e4 and 5e5: angles in f32 vs f64, bf16 inverse "
       "frequencies, bf16/f16 cos/sin tables, bf16 positions",
       drift::rope_position, drift::rope_position_cost},
      {"softmax-vocab",
       "softmax, cross-entropy and z-loss vs vocabulary 1K … 256K at logit scales 1 and 16: "
       "f32/bf16/f16 with f32 or low-precision sums, with and without max-subtraction, fast",
       drift::softmax_vocab, drift::softmax_vocab_cost},
      {"norm-width",
       "RMSNorm and LayerNorm vs width 64 … 65536 at mean offsets 0 and 64: accumulation "
       "format, one-pass vs two-pass variance, fast",
       drift::norm_width, drift::norm_width_cost},
      {"gelu-bf16",
       "GELU-tanh and exact GELU over every finite bf16 input (by binade of |x|), against exact "
       "GELU: f32 compute, all-bf16, fast",
       drift::gelu_bf16, drift::gelu_bf16_cost},
      {"sinusoidal-identity",
       "C01 PE(p)·PE(p−Δ) = Σ cos(Δω) in f32 vs position 1 … 2^20: where the identity stops "
       "holding numerically",
       drift::sinusoidal_identity, drift::sinusoidal_identity_cost},
      {"fp8-activations",
       "e4m3/e5m2 storage of RMSNorm outputs and SwiGLU activations vs activation scale "
       "2^-16 … 2^16, with and without per-tensor scaling",
       drift::fp8_activations, drift::fp8_activations_cost},
      {"attention-length",
       "attention vs number of keys 128 … 16384: naive vs online softmax, bf16/f16 with f32 or "
       "low-precision sums",
       drift::attention_length, drift::attention_length_cost},
      {"mla-absorption",
       "MLA absorbed vs naive form vs sequence length 16 … 256: bf16 with f32 or bf16 sums, f32",
       drift::mla_absorption, drift::mla_absorption_cost},
  };
  return audits;
}

const DriftAudit& find_drift_audit(const std::string& name) {
  std::string names;
  for (const DriftAudit& a : drift_audits()) {
    if (a.name == name) return a;
    names += (names.empty() ? "" : ", ") + a.name;
  }
  throw InputError("command line", "--audit",
                   "expected one of " + names + ", got \"" + name + "\"");
}

void check_drift_cost(const DriftAudit& audit, const DriftOptions& o, double max_cost) {
  const double cost = audit.cost(o);
  if (cost > max_cost) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "audit %s%s: the reference cost estimate %.3g operations exceeds the limit %.3g "
                  "(raise it with --max-cost%s)",
                  audit.name.c_str(), o.quick ? " (quick)" : "", cost, max_cost,
                  o.quick ? "" : ", or run the --quick sweep");
    throw InputError("command line", "--max-cost", buf);
  }
}

DriftResult run_drift_audit(const DriftAudit& audit, const DriftOptions& o,
                            const DriftProgress& progress) {
  DriftResult r = audit.run(o, progress);
  r.audit = audit.name;
  r.quick = o.quick;
  r.seed = o.seed;
  // The kernel libraries are policies of the audits that have kernel policies (drift_kernels.h:
  // "fast …" always, "gpu …" with a CUDA device); say why a gpu policy is missing.
  bool kernels = false;
  for (const DriftPolicy& p : r.policies) kernels |= p.name.rfind("fast ", 0) == 0;
  const SystemInfo info = system_info();
  if (!info.cuda_device) {
    r.notes.push_back("gpu policy: not run, no CUDA device on this machine (" +
                      info.cuda_device_name + ")");
  } else if (!kernels) {
    r.notes.push_back("gpu policy: not run, this audit has no kernel policies (" + r.op + ")");
  }
  return r;
}

const DriftRow& drift_row(const DriftResult& r, const std::string& panel, const std::string& policy,
                          double x) {
  for (const DriftRow& row : r.rows) {
    if (row.panel == panel && row.policy == policy && row.x == x) return row;
  }
  throw std::out_of_range("drift: no row for panel \"" + panel + "\", policy \"" + policy +
                          "\", x " + std::to_string(x));
}

std::vector<double> drift_xs(const DriftResult& r, const std::string& panel,
                             const std::string& policy) {
  std::vector<double> xs;
  for (const DriftRow& row : r.rows) {
    if (row.panel == panel && row.policy == policy) xs.push_back(row.x);
  }
  std::sort(xs.begin(), xs.end());
  return xs;
}

namespace {

// Shortest round-trip text of a double ("inf" for +inf).
std::string num(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  char buf[32];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

nlohmann::json number_or_inf(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

}  // namespace

std::string drift_csv(const DriftResult& r) {
  std::ostringstream o;
  o << "panel,policy,x,max_ulps,mean_ulps,max_rel,sig_bits,norm_rel,compared,nonfinite\n";
  for (const DriftRow& row : r.rows) {
    const DriftStats& s = row.stats;
    o << csv_field(row.panel) << "," << csv_field(row.policy) << "," << num(row.x) << ","
      << num(s.max_ulps) << "," << num(s.mean_ulps) << "," << num(s.max_rel) << ","
      << num(s.sig_bits) << "," << num(s.norm_rel) << "," << s.compared << "," << s.nonfinite
      << "\n";
  }
  return o.str();
}

nlohmann::json drift_json(const DriftResult& r) {
  nlohmann::json j;
  j["audit"] = r.audit;
  j["op"] = r.op;
  j["description"] = r.description;
  j["x_label"] = r.x_label;
  j["x_log"] = r.x_log;
  j["quick"] = r.quick;
  j["seed"] = r.seed;
  j["panels"] = r.panels;
  j["policies"] = nlohmann::json::array();
  for (const DriftPolicy& p : r.policies) {
    j["policies"].push_back({{"name", p.name}, {"description", p.description}});
  }
  j["rows"] = nlohmann::json::array();
  for (const DriftRow& row : r.rows) {
    const DriftStats& s = row.stats;
    j["rows"].push_back({{"panel", row.panel},
                         {"policy", row.policy},
                         {"x", row.x},
                         {"max_ulps", s.max_ulps},
                         {"mean_ulps", s.mean_ulps},
                         {"max_rel", number_or_inf(s.max_rel)},
                         {"sig_bits", s.sig_bits},
                         {"norm_rel", number_or_inf(s.norm_rel)},
                         {"compared", s.compared},
                         {"nonfinite", s.nonfinite}});
  }
  j["notes"] = r.notes;
  return j;
}

std::string drift_table(const DriftResult& r) {
  std::ostringstream o;
  o << r.audit << ": " << r.op << (r.quick ? " (quick sweep)" : "") << "\n";
  o << "Policies:\n";
  for (const DriftPolicy& p : r.policies) o << "  " << p.name << ": " << p.description << "\n";
  char line[256];
  for (const std::string& panel : r.panels) {
    o << "\n[" << panel << "]\n";
    std::snprintf(line, sizeof line, "%-24s %14s %12s %11s %10s %8s %10s %9s\n", "policy",
                  r.x_label.substr(0, 14).c_str(), "max ulps", "mean ulps", "max rel", "sig bits",
                  "norm rel", "nonfinite");
    o << line;
    for (const DriftRow& row : r.rows) {
      if (row.panel != panel) continue;
      const DriftStats& s = row.stats;
      std::snprintf(line, sizeof line, "%-24s %14s %12.4g %11.4g %10.3g %8.2f %10.3g %9lld\n",
                    row.policy.substr(0, 24).c_str(), num(row.x).c_str(), s.max_ulps, s.mean_ulps,
                    s.max_rel, s.sig_bits, s.norm_rel, static_cast<long long>(s.nonfinite));
      o << line;
    }
  }
  if (!r.notes.empty()) {
    o << "\nNotes:\n";
    for (const std::string& n : r.notes) o << "  " << n << "\n";
  }
  return o.str();
}

namespace drift {

std::vector<double> bf16_uniform(uint64_t seed, std::string_view name, int64_t n, double a,
                                 double b) {
  const ref::Tensor t = uniform(seed, name, ref::DType::bf16, {n}, a, b);
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    // Below f16's smallest normal a bf16 value may not be an f16 value: such draws (probability
    // 2^-13 per element for [-1, 1)) become 0, so that f16 policies read the same inputs.
    const double x = t.get(i);
    v[static_cast<size_t>(i)] = std::fabs(x) < 0x1p-14 ? 0.0 : x;
  }
  return v;
}

std::vector<int64_t> uniform_ints(uint64_t seed, std::string_view name, int64_t n, int64_t lo,
                                  int64_t hi) {
  const ref::Tensor t = uniform_int(seed, name, ref::DType::i64, {n}, lo, hi);
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<int64_t>(t.bits(i));
  return v;
}

std::vector<int64_t> doubling(int64_t lo, int64_t hi) {
  std::vector<int64_t> v;
  for (int64_t x = lo; x <= hi; x *= 2) v.push_back(x);
  return v;
}

void ResultBuilder::policy(std::string name, std::string description) {
  r_.policies.push_back({std::move(name), std::move(description)});
}

void ResultBuilder::add(const std::string& panel, const std::string& policy, double x,
                        const DriftAccumulator& acc) {
  if (std::find(r_.panels.begin(), r_.panels.end(), panel) == r_.panels.end()) {
    throw std::logic_error("drift: undeclared panel " + panel);
  }
  if (std::none_of(r_.policies.begin(), r_.policies.end(),
                   [&](const DriftPolicy& p) { return p.name == policy; })) {
    throw std::logic_error("drift: undeclared policy " + policy);
  }
  r_.rows.push_back({panel, policy, x, acc.result()});
}

void ResultBuilder::finish() {
  const auto panel_pos = [&](const std::string& s) {
    return std::find(r_.panels.begin(), r_.panels.end(), s) - r_.panels.begin();
  };
  const auto policy_pos = [&](const std::string& s) {
    return std::find_if(r_.policies.begin(), r_.policies.end(),
                        [&](const DriftPolicy& p) { return p.name == s; }) -
           r_.policies.begin();
  };
  std::stable_sort(r_.rows.begin(), r_.rows.end(), [&](const DriftRow& a, const DriftRow& b) {
    const auto ka = std::make_tuple(panel_pos(a.panel), policy_pos(a.policy), a.x);
    const auto kb = std::make_tuple(panel_pos(b.panel), policy_pos(b.policy), b.x);
    return ka < kb;
  });
}

}  // namespace drift
}  // namespace lmo::oracle
