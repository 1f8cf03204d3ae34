// `lmoracle claims`: evaluates the claims registry (oracle/claims.h) and prints a table or JSON.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "oracle/claims.h"

namespace lmo::oracle {

struct ClaimsOptions {
  std::string id;       // one claim ("C05"), or empty for all
  std::string backend;  // one backend ("ref", "ref-bf16"), or empty for all (claim_backends())
  bool json = false;
  uint64_t seed = 20261122;
};

// Evaluates the selected claims on the selected backends and prints them to `out`: a table
// (ID, kind, status, trials, statement; then the evidence per backend, the counterexample, the
// float bound's source) or, with json, a list of objects with id, status and evidence. Returns 1
// when any claim FAILS, else 0. Throws std::invalid_argument naming --id or --backend and the
// valid values when either names nothing.
int run_claims(const ClaimsOptions& o, std::ostream& out);

// One claim's result as JSON (the objects of the list run_claims prints).
nlohmann::json claim_json(const Claim& c, const ClaimEvidence& ev);

// The valid values of --id and --backend, comma-separated.
std::string claim_ids();
std::string claim_backend_names();

}  // namespace lmo::oracle
