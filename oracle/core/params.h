// Typed, checked access to one case's "params" object. Every getter names the field and the
// expectation when the value is missing, of the wrong type or out of range (InputError, which
// the command line turns into exit code 2), and finish() rejects keys no getter asked for, so
// a misspelt parameter ("epsilon" for "eps") is an error instead of a silently used default.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "oracle/core/case_error.h"

namespace lmo::oracle {

class ParamReader {
 public:
  // file: for messages; path: the field path of the object ("cases[2].params").
  ParamReader(const nlohmann::json& params, std::string file, std::string path);

  // An integer in [lo, hi]; without a default the key is required.
  int64_t integer(std::string_view key, int64_t lo, int64_t hi,
                  std::optional<int64_t> fallback = std::nullopt);
  // A finite number in [lo, hi] (the bounds may be ±infinity for one-sided ranges).
  double real(std::string_view key, double lo, double hi,
              std::optional<double> fallback = std::nullopt);
  bool flag(std::string_view key, bool fallback);
  // One of the listed strings.
  std::string choice(std::string_view key, const std::vector<std::string>& options,
                     std::optional<std::string> fallback = std::nullopt);
  // A list of integers, each in [lo, hi]; required.
  std::vector<int64_t> integers(std::string_view key, int64_t lo, int64_t hi);
  // Whether the key is present (for an optional list: integers() when it is).
  bool has(std::string_view key) const;
  // Cumulative lengths [0, l₁, l₁+l₂, …, total] of packed sequences, strictly increasing (no
  // empty sequence): FlashAttention's cu_seqlens; required.
  std::vector<int64_t> cumulative_lengths(std::string_view key, int64_t total);

  // An error about this object's field key, for cross-field checks ("h must be divisible by g").
  [[noreturn]] void fail(std::string_view key, const std::string& expectation) const;

  // Throws for keys present but never read.
  void finish() const;

 private:
  const nlohmann::json* find(std::string_view key);
  std::string field(std::string_view key) const;

  const nlohmann::json& params_;
  std::string file_, path_;
  std::set<std::string, std::less<>> used_;
};

}  // namespace lmo::oracle
