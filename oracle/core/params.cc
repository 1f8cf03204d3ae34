#include "oracle/core/params.h"

#include <cmath>
#include <limits>

#include "oracle/core/utf8.h"

namespace lmo::oracle {
namespace {

std::string show(const nlohmann::json& v) { return json_for_message(v); }

std::string range(double lo, double hi) {
  const auto b = [](double x) {
    nlohmann::json j = x;
    return j.dump();
  };
  if (std::isinf(lo) && std::isinf(hi)) return "any finite number";
  if (std::isinf(hi)) return "a finite number >= " + b(lo);
  if (std::isinf(lo)) return "a finite number <= " + b(hi);
  return "a finite number in [" + b(lo) + ", " + b(hi) + "]";
}

}  // namespace

ParamReader::ParamReader(const nlohmann::json& params, std::string file, std::string path)
    : params_(params), file_(std::move(file)), path_(std::move(path)) {
  if (!params_.is_object()) {
    throw InputError(file_, path_, "expected an object of parameters, got " + show(params_));
  }
}

std::string ParamReader::field(std::string_view key) const {
  return path_ + "." + std::string(key);
}

void ParamReader::fail(std::string_view key, const std::string& expectation) const {
  throw InputError(file_, field(key), expectation);
}

bool ParamReader::has(std::string_view key) const {
  return params_.is_object() && params_.contains(std::string(key));
}

std::vector<int64_t> ParamReader::cumulative_lengths(std::string_view key, int64_t total) {
  std::vector<int64_t> cu = integers(key, 0, total);
  if (cu.size() < 2 || cu.front() != 0 || cu.back() != total) {
    fail(key, "expected [0, …, " + std::to_string(total) + "]: the cumulative sequence lengths");
  }
  for (size_t i = 1; i < cu.size(); ++i) {
    if (cu[i] <= cu[i - 1]) fail(key, "expected strictly increasing offsets (no empty sequence)");
  }
  return cu;
}

const nlohmann::json* ParamReader::find(std::string_view key) {
  used_.emplace(key);
  const auto it = params_.find(std::string(key));
  return it == params_.end() ? nullptr : &*it;
}

int64_t ParamReader::integer(std::string_view key, int64_t lo, int64_t hi,
                             std::optional<int64_t> fallback) {
  const std::string want =
      "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  const nlohmann::json* v = find(key);
  if (!v) {
    if (fallback) return *fallback;
    fail(key, want + ", but it is missing");
  }
  if (!v->is_number_integer()) fail(key, want + ", got " + show(*v));
  const bool is_unsigned = v->is_number_unsigned();
  if (is_unsigned && v->get<uint64_t>() > static_cast<uint64_t>(hi)) {
    fail(key, want + ", got " + show(*v));
  }
  const int64_t x = v->get<int64_t>();
  if (x < lo || x > hi) fail(key, want + ", got " + show(*v));
  return x;
}

double ParamReader::real(std::string_view key, double lo, double hi,
                         std::optional<double> fallback) {
  const std::string want = "expected " + range(lo, hi);
  const nlohmann::json* v = find(key);
  if (!v) {
    if (fallback) return *fallback;
    fail(key, want + ", but it is missing");
  }
  if (!v->is_number()) fail(key, want + ", got " + show(*v));
  const double x = v->get<double>();
  if (!std::isfinite(x) || x < lo || x > hi) fail(key, want + ", got " + show(*v));
  return x;
}

bool ParamReader::flag(std::string_view key, bool fallback) {
  const nlohmann::json* v = find(key);
  if (!v) return fallback;
  if (!v->is_boolean()) fail(key, "expected true or false, got " + show(*v));
  return v->get<bool>();
}

std::string ParamReader::choice(std::string_view key, const std::vector<std::string>& options,
                                std::optional<std::string> fallback) {
  std::string list;
  for (const std::string& o : options) list += (list.empty() ? "\"" : ", \"") + o + "\"";
  const std::string want = "expected one of " + list;
  const nlohmann::json* v = find(key);
  if (!v) {
    if (fallback) return *fallback;
    fail(key, want + ", but it is missing");
  }
  if (v->is_string()) {
    for (const std::string& o : options) {
      if (v->get<std::string>() == o) return o;
    }
  }
  fail(key, want + ", got " + show(*v));
}

std::vector<int64_t> ParamReader::integers(std::string_view key, int64_t lo, int64_t hi) {
  const std::string want = "expected a non-empty list of integers in [" + std::to_string(lo) +
                           ", " + std::to_string(hi) + "]";
  const nlohmann::json* v = find(key);
  if (!v) fail(key, want + ", but it is missing");
  if (!v->is_array() || v->empty()) fail(key, want + ", got " + show(*v));
  std::vector<int64_t> out;
  for (const nlohmann::json& e : *v) {
    if (!e.is_number_integer() ||
        (e.is_number_unsigned() && e.get<uint64_t>() > static_cast<uint64_t>(hi)) ||
        e.get<int64_t>() < lo || e.get<int64_t>() > hi) {
      fail(key, want + ", got the element " + show(e));
    }
    out.push_back(e.get<int64_t>());
  }
  return out;
}

void ParamReader::finish() const {
  for (auto it = params_.begin(); it != params_.end(); ++it) {
    if (!used_.contains(it.key())) {
      std::string known;
      for (const std::string& k : used_) known += (known.empty() ? "" : ", ") + k;
      fail(it.key(), "unknown parameter for this op (its parameters: " + known + ")");
    }
  }
}

}  // namespace lmo::oracle
