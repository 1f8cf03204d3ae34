// `lmoracle claims`: evaluates the claims registry (oracle/claims/claims.h) and prints a table or JSON.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "oracle/claims/claims.h"

namespace lmo::oracle {

struct ClaimsOptions {
  std::string id;       // one claim ("C05"), or empty for all
  // One backend ("ref", "ref-bf16", "fast-avx2"), "fast" for every fast-<target>, or empty for
  // all (claim_backends()).
  std::string backend;
  bool json = false;
  uint64_t seed = 20261122;
};

// Evaluates the selected claims on the selected backends and prints them to `out`: a table
// (ID, kind, status, trials, statement; then the evidence per backend, the counterexample, the
// float bound's source) or, with json, a list of objects with id, status and evidence. Returns 1
// when any claim FAILS, else 0. Throws std::invalid_argument naming --id or --backend and the
// valid values when either names nothing.
int run_claims(const ClaimsOptions& o, std::ostream& out);

// Every claim of the registry on every claim backend, summarized for `lmoracle verify`: one
// count per status and, for a claim that FAILS, its line. `json` holds claim_json of each.
struct ClaimsSummary {
  int total = 0;
  int holds = 0, refuted = 0, errata = 0, fails = 0;
  std::vector<std::string> failing;  // "C05: <summary>"
  std::vector<std::string> backends;  // where they were evaluated (claim_backends())
  // One line per kernel backend: how many claims ran on its kernels, and which.
  std::string kernel_coverage;
  nlohmann::json json = nlohmann::json::array();
};
ClaimsSummary summarize_claims(uint64_t seed = 20261122);
// "claims: 35 evaluated on ref, ref-f64, …: 27 hold, 3 refuted as stated, 5 errata shown, 0 FAIL"
std::string to_text(const ClaimsSummary& s);

// One claim's result as JSON (the objects of the list run_claims prints).
nlohmann::json claim_json(const Claim& c, const ClaimEvidence& ev);

// The valid values of --id and --backend, comma-separated.
std::string claim_ids();
std::string claim_backend_names();

}  // namespace lmo::oracle
